"""Fleet verdicts as Parquet: one part file per run, written atomically, so that many workers can
write into one directory side by side and DuckDB (or any engine) reads them all at once with
`read_parquet('DIR/**/*.parquet')`."""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from collections.abc import Sequence
from pathlib import Path

import duckdb

from replay.audit.verify import VERDICT_COLUMNS, SessionReport
from replay.logs import deepjson


def _json(value: object) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except RecursionError:
        return deepjson.dumps(value)


def write_verdicts(reports: Sequence[SessionReport], out: Path, name: str | None = None) -> Path:
    """Write the reports' verdict rows to a new part file in `out` (created if needed); return it.

    The part is named `name` or `verdicts-<uuid>`; it is written beside its final name and renamed
    into place once complete, so a reader never sees half a part.
    """
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{name or f'verdicts-{uuid.uuid4().hex}'}.parquet"
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=out)
    os.close(fd)
    tmp = Path(tmp_name)
    columns = list(VERDICT_COLUMNS)
    placeholders = ", ".join(f"CAST(? AS {kind})" for kind in VERDICT_COLUMNS.values())
    try:
        with duckdb.connect() as con:
            con.execute(f"CREATE TABLE v ({', '.join(f'{c} {t}' for c, t in VERDICT_COLUMNS.items())})")
            rows = []
            for report in reports:
                row = report.row()
                rows.append([_json(row[c]) if VERDICT_COLUMNS[c] == "JSON" else row[c] for c in columns])
            if rows:
                con.executemany(f"INSERT INTO v VALUES ({placeholders})", rows)
            path = str(tmp).replace("'", "''")
            con.execute(f"COPY v TO '{path}' (FORMAT parquet)")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target
