"""Fleets on a distributed engine (Dask): the same verification, many machines, Parquet verdicts.

Imports the audit, the cache, `duck` (the Parquet verdict parts) and below."""
