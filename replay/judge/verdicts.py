"""A session's verdict, and the columns of its verdict record: the vocabulary every output
shares, kept apart from the report's values so that a cache hit's text output loads neither
the reports nor the fold they hold."""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    """A session's verdict (a run's exit status follows its verdicts: replay.exitstatus.EXIT_ORDER)."""

    OK = "ok"
    CORRUPT = "corrupt"
    UNREADABLE = "unreadable"
    UNSUPPORTED = "unsupported"
    """A log of a format newer than schedlog reads (above v4): it cannot be judged (exit 3)."""


VERDICT_COLUMNS = {
    "path": "VARCHAR", "session_id": "VARCHAR", "verdict": "VARCHAR", "event_count": "BIGINT",
    "schedule_event_count": "BIGINT", "seed_length": "BIGINT", "violation_rule": "VARCHAR",
    "violation_index": "BIGINT", "violation_seq": "BIGINT", "violation_line": "BIGINT", "violation_pointer": "VARCHAR",
    "violation_message": "VARCHAR", "format_findings": "JSON", "active_count": "BIGINT", "format_version": "BIGINT",
    "generation": "BIGINT", "profile": "VARCHAR", "profile_source": "VARCHAR", "profile_evidence": "JSON",
}  # fmt: skip
"""The columns of a session's verdict record (`SessionReport.row`), with their DuckDB types: one
vocabulary for the CSV output, the Parquet verdict parts and the replay database's `sessions`
table (which holds them all, and more)."""
