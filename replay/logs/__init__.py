"""Reading session logs as the harness wrote them: JSON lines, packed chunk rows, zstd frames."""
