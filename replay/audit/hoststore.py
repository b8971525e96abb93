"""Judging a Host task store file (`schedule.json`) with the verdict vocabulary of a session.

A store is recognised by its content (a JSON object whose `unit` names `schedule`), wherever it
is named; `verify` walks find the ones named `schedule.json`. It is `corrupt` when the Host
would refuse to open it (any finding of host.md §1-§4), with the first finding as its
violation and every other one as a finding, each located by JSON pointer and task id.
"""

from __future__ import annotations

import os

from invariant.hoststore import is_store, store_findings
from replay.audit.verify import SessionReport, Verdict, Violation
from replay.logs.discover import LOG_SUFFIXES, STORE_NAME
from replay.logs.jsonline import JsonLineError, parse_json_line
from replay.logs.logfile import Finding, Severity

CORRUPT_TASK_STORE = "corrupt_task_store"
"""The code of a store the Host refuses to open."""
SNIFF_BYTES = 4096
MAX_STORE_BYTES = 1 << 30


def _store_value(path: str) -> object | None:
    """The file's JSON value when it may be a Host task store (None: read it as a session log)."""
    if path.endswith(LOG_SUFFIXES) or path == "<stdin>":
        return None
    try:
        with open(path, "rb") as f:
            head = f.read(SNIFF_BYTES)
            if os.path.basename(path) != STORE_NAME and (not head.lstrip().startswith(b"{") or b'"unit"' not in head):
                return None
            data = head + f.read(MAX_STORE_BYTES)
    except OSError:
        return None
    try:
        value = parse_json_line(data)
    except JsonLineError:
        return None
    return value if is_store(value) else None


def store_report(path: str) -> SessionReport | None:
    """The store's report, or None when the file is not a Host task store."""
    value = _store_value(path)
    if value is None:
        return None
    found = store_findings(value)
    tables = value.get("tables") if isinstance(value, dict) else None
    tasks = tables.get("tasks") if isinstance(tables, dict) else None
    count = len(tasks) if isinstance(tasks, dict) else 0
    violation = None
    if found:
        first = found[0]
        where = f"task {first.task!r}: " if first.task is not None else ""
        violation = Violation(CORRUPT_TASK_STORE, first.rule, None, None, None, first.pointer, where + first.message)
    findings = tuple(
        Finding(f.rule, Severity.ERROR, f"{f.pointer}" + (f" (task {f.task!r})" if f.task else "") + f": {f.message}")
        for f in found[1:]
    )
    return SessionReport(
        path=path,
        session=None,
        seed_length=None,
        events=count,
        schedule_events=count,
        verdict=Verdict.CORRUPT if found else Verdict.OK,
        violation=violation,
        findings=findings,
        folded=None,
        store=True,
    )
