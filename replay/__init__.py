"""schedlog.replay: reading real session logs, the CLI, DuckDB replay and the owner simulator."""
