"""Session logs into DuckDB (replay) and questions asked of the database (sql, inspect)."""
