"""A Host root: the task store against the session logs beside it (host.md §6).

The store itself is judged with the sessions (`verify.store_report`); this is what only the
whole root can tell: receipts without their message, messages without a receipt, tasks whose
session has no log.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from invariant.findings import Finding, Severity
from invariant.hoststore import from_a_kept_task, located_receipts
from invariant.shapes import pointer_to
from replay.judge.report import SessionReport
from replay.judge.verdicts import Verdict
from replay.reading import EVERYTHING, Selection


def _receipts(task: dict[str, Any], pointer: str) -> tuple[dict[str, str], bool]:
    """The message ids a task's receipts name, each with the JSON pointer of the first naming it
    (the task being at `pointer`), and whether earlier receipts may be missing."""
    ids: dict[str, str] = {}
    for where, receipt in located_receipts(task, pointer):
        if isinstance(message := receipt.get("messageId"), str):
            ids.setdefault(message, f"{where}/messageId")
    history = task.get("deliveryHistory")
    if not isinstance(history, dict):
        return ids, True
    return ids, bool(history.get("earlierRecordsPruned")) or bool(history.get("earlierRecordsUnavailable"))


def root_findings(store: SessionReport, sessions: Sequence[SessionReport]) -> list[Finding]:
    """The store against the session logs beside it (host.md §6): every retained receipt names a
    Host reminder message in its task's session; every such message has a receipt (unless that
    session's history was pruned); every task's session has a log. A reminder from a task
    deleted since (its receipts went with it) is only information."""
    tasks = store.store_tasks
    by_session = {r.session: r for r in sessions if r.session is not None and not r.store}
    found: list[Finding] = []
    named: dict[str, set[str]] = {}
    pruned: set[str] = set()
    for key, task in tasks.items():
        if not isinstance(task, dict) or not isinstance(session_id := task.get("sessionId"), str):
            continue
        at = "/tables/tasks" + pointer_to(key)
        ids, may_miss = _receipts(task, at)
        named.setdefault(session_id, set()).update(ids)
        if may_miss:
            pruned.add(session_id)
        log = by_session.get(session_id)
        if log is None:
            text = f"task {key!r}: its session {session_id!r} has no log under {os.path.dirname(store.path) or '.'}"
            found.append(Finding("host.session.missing", Severity.WARNING, text, pointer=f"{at}/sessionId"))
            continue
        for message in sorted(set(ids) - set(log.host_messages)):
            text = f"task {key!r}: receipt {message!r} names no Host reminder message in {log.path}"
            found.append(Finding("host.receipt.unmatched", Severity.WARNING, text, pointer=ids[message]))
    for session_id, log in by_session.items():
        if session_id in pruned:
            continue
        texts = dict(zip(log.host_messages, log.host_message_texts, strict=False))
        for message in sorted(set(log.host_messages) - named.get(session_id, set())):
            if not from_a_kept_task(texts.get(message, ""), session_id, tasks):
                text = (
                    f"Host reminder message {message!r} in {log.path} came from no task still in the store "
                    "(deleted since, with its receipts): no receipt can name it"
                )
                found.append(Finding("host.message.task-deleted", Severity.INFO, text))
                continue
            text = f"Host reminder message {message!r} in {log.path} has no receipt in the store"
            found.append(Finding("host.message.unreceipted", Severity.WARNING, text))
    return found


def cross_checked(reports: Sequence[SessionReport], selection: Selection = EVERYTHING) -> list[SessionReport]:
    """The reports, each Host task store's with its root's cross-check findings added (the
    session logs under the store's directory form its root), those `selection` keeps."""
    out = list(reports)
    for n, report in enumerate(out):
        if not report.store or report.verdict is not Verdict.OK:
            continue
        root = os.path.dirname(os.path.abspath(report.path))
        beside = [r for r in out if not r.store and os.path.abspath(r.path).startswith(root + os.sep)]
        extra = selection.kept(root_findings(report, beside))
        if extra:
            out[n] = replace(report, findings=(*report.findings, *extra))
    return out
