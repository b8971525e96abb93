"""Session logs into DuckDB (replay) and questions asked of the database (sql, inspect).

Imports the audit, the cache, the judge, the reader and below (a log's rows and its verdict are had in one reading)."""
