"""Fleets on a distributed engine (Dask): the same verification, many machines, Parquet verdicts."""
