"""The Host task stores of a replay, as tables: `host_tasks`, `host_deliveries`, `host_findings`,
and the view `host_reminder_deliveries` joining each retained receipt to the session message
that carried it (NULL where none did: "which reminders never reached their session").

The rows come from each store's JSON as written (a corrupt store's readable tasks included), its
findings from `verify` (the store's rules, then the cross-check against the sessions replayed
beside it). Rows are staged here as JSON lines; `build` reads them as it reads the sessions'
small tables.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from invariant.hoststore import receipts
from replay.duck.staging import _dumps
from replay.judge.report import SessionReport

COLUMNS = {
    "host_tasks": {
        "store_path": "VARCHAR", "task_id": "VARCHAR", "session_id": "VARCHAR", "kind": "VARCHAR",
        "title": "VARCHAR", "prompt": "VARCHAR", "status": "VARCHAR", "scheduled_at": "VARCHAR",
        "delivery_count": "BIGINT", "task": "JSON",
    },
    "host_deliveries": {
        "store_path": "VARCHAR", "task_id": "VARCHAR", "session_id": "VARCHAR", "position": "BIGINT",
        "scheduled_at": "VARCHAR", "delivered_at": "VARCHAR", "message_id": "VARCHAR", "prompt": "VARCHAR",
        "latest": "BOOLEAN",
    },
    "host_findings": {
        "store_path": "VARCHAR", "rule": "VARCHAR", "severity": "VARCHAR", "pointer": "VARCHAR", "message": "VARCHAR",
    },
}  # fmt: skip
"""The Host tables' columns (instants as written; the tables cast them)."""


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _rows(store: SessionReport) -> Iterator[tuple[str, dict[str, Any]]]:
    for task_id, task in store.store_tasks.items():
        if not isinstance(task, dict):
            continue
        found = task.get("record")
        record: dict[str, Any] = found if isinstance(found, dict) else {}
        retained = receipts(task)
        session = _text(task.get("sessionId"))
        yield "host_tasks", {
            "store_path": store.path, "task_id": task_id, "session_id": session,
            "kind": _text(record.get("kind")), "title": _text(record.get("title")),
            "prompt": _text(record.get("prompt")), "status": _text(task.get("status", "active")),
            "scheduled_at": _text(record.get("scheduledAt")), "delivery_count": len(retained), "task": task,
        }  # fmt: skip
        for n, r in enumerate(retained):
            yield "host_deliveries", {
                "store_path": store.path, "task_id": task_id, "session_id": session, "position": n,
                "scheduled_at": _text(r.get("scheduledAt")), "delivered_at": _text(r.get("deliveredAt")),
                "message_id": _text(r.get("messageId")), "prompt": _text(r.get("prompt")),
                "latest": n == len(retained) - 1,
            }  # fmt: skip
    v = store.violation
    if v is not None:
        found = {"rule": v.rule, "severity": "error", "pointer": v.pointer, "message": v.message}
        yield "host_findings", {"store_path": store.path, **found}
    for f in store.findings:
        found = {"rule": f.code, "severity": str(f.severity), "pointer": f.pointer, "message": f.message}
        yield "host_findings", {"store_path": store.path, **found}


INSTANTS = ("scheduled_at", "delivered_at")
"""The columns staged as written and cast to TIMESTAMPTZ in the tables."""

VIEW_NAME = "host_reminder_deliveries"
VIEW = f"""
    CREATE VIEW {VIEW_NAME} AS
    SELECT d.*, m.session_key, m.idx AS message_index, m.line AS message_line, m.session_key IS NOT NULL AS reached
    FROM host_deliveries d
    LEFT JOIN (
        SELECT s.session_id, e.session_key, e.idx, e.line, json_extract_string(e.data, '$.id') AS message_id
        FROM events e JOIN sessions s USING (session_key)
        WHERE e.type = 'user/message' AND json_extract_string(e.data, '$.source.kind') = 'schedule'
    ) m ON m.session_id = d.session_id AND m.message_id = d.message_id
    ORDER BY d.store_path, d.task_id, d.position
    """


def stage_rows(stores: Sequence[SessionReport], stage: Path) -> tuple[dict[str, Path], int]:
    """Stage the stores' rows in `stage`: each Host table's file, and the longest line written."""
    files = {table: stage / f"{table}.ndjson" for table in COLUMNS}
    handles = {table: path.open("wb") for table, path in files.items()}
    longest = 0
    try:
        for store in stores:
            for table, row in _rows(store):
                line = _dumps(row) + b"\n"
                longest = max(longest, len(line))
                handles[table].write(line)
    finally:
        for handle in handles.values():
            handle.close()
    return files, longest
