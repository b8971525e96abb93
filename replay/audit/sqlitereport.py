"""The report of a session read from a SQLite session store (replay.logs.sqlitestore): the report
its JSONL log gets (the store gives the judge that log, line for line), and what only a store
can have wrong. A store, or a file that looks like one, that cannot be read as a session store
is an unreadable input (exit 2), its finding saying why."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from invariant.findings import Finding, Severity
from replay.audit.report import SessionReport
from replay.audit.verdicts import Verdict
from replay.logs.source import RecordSource
from replay.logs.sqlitenames import maybe_sqlite, sniffed, split_name
from replay.logs.sqlitestore import Store, StoreError
from replay.reading import DEFAULT_READING, Reading

HELD_VERSIONS = (0, 1)
"""The header versions a store's `sessions` columns can hold (v2 on need `isSeeded`)."""


def sqlite_report(
    path: str, judge: Callable[[RecordSource], SessionReport], reading: Reading = DEFAULT_READING
) -> SessionReport | None:
    """The report of `path` when it names a store's session (`STORE#ID`) or a SQLite file;
    None for any other input. `judge` judges the session's log (`verify.verify_log`)."""
    if not maybe_sqlite(path):
        return None
    named = split_name(path)
    if named is None:
        if not sniffed(path):
            return None
        try:  # a store named whole is judged session by session (discover expands it): this one cannot be
            with Store(path) as store:
                count = len(store.sessions())
        except StoreError as err:
            return unreadable(path, str(err), reading)
        return unreadable(path, f"a session store of {count} sessions: name one as {path}#SESSION_ID", reading)
    store_path, session_id = named
    try:
        with Store(store_path) as store:
            rows = store.read(session_id)
    except StoreError as err:
        return unreadable(path, str(err), reading)
    if rows is None:
        return unreadable(path, f"the store holds no session {session_id!r}", reading)
    from replay.logs.logfile import SessionLog

    report = judge(SessionLog(path, reading, rows.log))
    if type(rows.version) is int and rows.version not in HELD_VERSIONS:
        why = (
            f"the store holds a format-v{rows.version} session, whose header (isSeeded) no column of the store "
            "holds: the harness's reader refuses it"
        )
        held = Finding("sqlite.header", Severity.ERROR, why)
        return dataclasses.replace(
            report, verdict=Verdict.UNSUPPORTED, findings=(*reading.selection.kept((held,)), *report.findings)
        )
    if not rows.findings:
        return report
    verdict = Verdict.CORRUPT if rows.refused and report.verdict is Verdict.OK else report.verdict
    return dataclasses.replace(
        report, verdict=verdict, findings=(*reading.selection.kept(rows.findings), *report.findings)
    )


def unreadable(path: str, why: str, reading: Reading) -> SessionReport:
    """The report of an input that cannot be read as a store or a session of one."""
    return SessionReport(
        path=path,
        session=None,
        seed_length=None,
        events=0,
        schedule_events=0,
        verdict=Verdict.UNREADABLE,
        violation=None,
        findings=reading.selection.kept((Finding("format.unreadable", Severity.ERROR, why),)),
        folded=None,
    )
