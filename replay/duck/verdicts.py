"""Fleet verdicts as Parquet: one part file per run, written atomically, so that many workers can
write into one directory side by side and DuckDB (or any engine) reads them all at once with
`read_parquet('DIR/**/*.parquet')`."""

from __future__ import annotations

import os
import re
import tempfile
import uuid
from collections.abc import Sequence
from pathlib import Path

import duckdb

from replay.atomic import folder_of, publish
from replay.judge.report import SessionReport
from replay.judge.verdicts import VERDICT_COLUMNS
from replay.lines import deepjson
from replay.sources.discover import is_url


def part_name(shard: tuple[int, int] | None) -> str:
    """The name of `verify --format parquet`'s part: one per run, so that a re-run replaces its
    own (`verdicts`), and one per shard of a `--shard I/N` split (`verdicts-shard-I-of-N`)."""
    return "verdicts" if shard is None else f"verdicts-shard-{shard[0]}-of-{shard[1]}"


def other_runs_parts(out: Path | str, shard: tuple[int, int] | None) -> list[str]:
    """The Parquet files in `out` (a folder, or an object store's prefix) that are neither this
    run's part nor, for a shard, a part of another shard of the same split: another run's, which
    a re-run would be read beside (a folder of 8 sessions counted 16 after two runs)."""
    own = re.compile(rf"verdicts-shard-\d+-of-{shard[1]}\.parquet" if shard else r"verdicts\.parquet")
    if isinstance(out, str) and is_url(out):
        from replay.duck.published import names_under

        names = sorted(n for n in names_under(out) if n.endswith(".parquet"))
    else:
        try:
            names = sorted(entry.name for entry in os.scandir(out) if entry.name.endswith(".parquet"))
        except FileNotFoundError:
            return []
    return [name for name in names if not own.fullmatch(name)]


def write_verdicts(reports: Sequence[SessionReport], out: Path | str, name: str | None = None) -> Path | str:
    """Write the reports' verdict rows to a new part file in `out` (created if needed); return it.
    Under an object store's prefix (`out` a URL), the part is made in a local folder and put there
    in one PUT, whole or absent (published.write_part); its URL is returned."""
    if isinstance(out, str) and is_url(out):
        from replay.duck.published import write_part

        return write_part(lambda folder: _part_in(reports, folder, name), out)
    return _part_in(reports, Path(out), name)


def _part_in(reports: Sequence[SessionReport], out: Path, name: str | None) -> Path:
    """`write_verdicts` into the folder `out`.

    The part is named `name` or `verdicts-<uuid>`; it is written beside its final name and renamed
    into place once complete, so a reader never sees half a part.
    """
    folder_of(out)  # the folder an option names is made, never its parents
    out.mkdir(exist_ok=True)
    target = out / f"{name or f'verdicts-{uuid.uuid4().hex}'}.parquet"
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=out)
    os.close(fd)
    tmp = Path(tmp_name)
    rows = tmp.with_suffix(".rows")
    try:
        lines = [deepjson.dumps(report.row()) for report in reports]  # text DuckDB holds (no lone surrogate)
        with open(rows, "w", encoding="utf-8") as f:  # DuckDB reads rows in bulk from JSON lines
            f.writelines(line + "\n" for line in lines)
        longest = max(map(len, lines), default=0) * 4 + 1  # bytes, at most 4 a character
        typed = ", ".join(f"'{c}': '{t}'" for c, t in VERDICT_COLUMNS.items())
        source = str(rows).replace("'", "''")
        path = str(tmp).replace("'", "''")
        with duckdb.connect() as con:
            con.execute(
                f"COPY (SELECT * FROM read_json('{source}', columns={{{typed}}}, format='newline_delimited', "
                f"maximum_object_size={max(1 << 21, longest)})) TO '{path}' (FORMAT parquet)"
            )
        publish(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
        rows.unlink(missing_ok=True)
    return target
