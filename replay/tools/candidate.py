"""`check`: may this candidate event be appended to this session log? (protocol.md §4)"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from invariant import SCHEDULE_CHANGE, ScheduleLogError
from invariant.detect import detect
from invariant.jsvalue import number_equals, shown
from invariant.live import check_candidate, stage_of
from replay.lines.jsonline import JsonLineError, parse_json_line
from replay.logs.logfile import SessionLog
from replay.reading import DEFAULT_READING, Reading
from replay.sources.bytesource import Data


class CandidateInputError(ValueError):
    """The log or the candidate cannot be read (a usage problem, not a verdict)."""


@dataclass(frozen=True)
class CandidateVerdict:
    log: str
    accepted: bool
    checked: bool
    """False when the candidate is an event of another type, which this plugin never checks."""
    index: int
    stage: str | None = None
    rule: str | None = None
    pointer: str | None = None
    message: str | None = None
    active: tuple[dict[str, object], ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "log": self.log,
            "verdict": "accepted" if self.accepted else "rejected",
            "checked": self.checked,
            "index": self.index,
            "seq": self.index,
            "stage": self.stage,
            "code": None if self.accepted else "corrupt_schedule_log",
            "rule": self.rule,
            "pointer": self.pointer,
            "message": self.message,
            "active": list(self.active),
        }


NO_SEQ = object()
"""A candidate that is a bare payload, or an event without `seq`: the host assigns it."""


def read_candidate(raw: bytes) -> tuple[object, str | None, object]:
    """(payload, event type, seq): a whole event `{type, seq?, time?, data}` or a bare payload."""
    try:
        value = parse_json_line(raw.strip())
    except JsonLineError as err:
        raise CandidateInputError(f"the candidate is not one JSON value: {err}") from None
    if isinstance(value, Mapping) and isinstance(value.get("type"), str) and "data" in value:
        return value["data"], value["type"], value.get("seq", NO_SEQ)
    return value, None, NO_SEQ


def read_events(path: str, reading: Reading, data: Data | None = None) -> tuple[SessionLog, list[object]]:
    log = SessionLog(path, reading, data)
    events: list[object] = [e for entry in log.entries() for e in entry.events()]
    if log.unreadable:
        reason = "; ".join(f.message for f in log.findings if f.code == "format.unreadable")
        raise CandidateInputError(f"{path}: {reason}")
    return log, events


def check_log_candidate(
    path: str,
    candidate: bytes,
    reading: Reading = DEFAULT_READING,
    log_data: Data | None = None,
) -> CandidateVerdict:
    """Fold the log plus the candidate, then apply live validation; one verdict. A log the
    reference cannot load takes no candidate (stage `load`), and a whole event's own seq must be
    the next one (stage `append`)."""
    payload, event_type, seq = read_candidate(candidate)
    log, events = read_events(path, reading, log_data)
    index = len(events)
    if log.head.unsupported:
        raise CandidateInputError(f"{path}: a format newer than v4, which schedlog cannot judge")
    refusal = next((f for f in log.findings if f.severity == "error"), None)
    if refusal is not None:
        message = f"the log cannot be loaded: {refusal.message}"
        return CandidateVerdict(path, False, False, index, "load", refusal.code, None, message)
    if seq is not NO_SEQ and not number_equals(seq, index):
        message = f"the candidate's seq is {shown(seq)}; the next event's is {index}"
        return CandidateVerdict(path, False, False, index, "append", "format.seq-gap", "/seq", message)
    if event_type is not None and event_type != SCHEDULE_CHANGE:
        return CandidateVerdict(path, True, False, index, message=f"{event_type} events are not checked")
    seed = reading.seed_for(log.seed_length)
    profile = reading.profile
    if profile is None:  # auto: the log's evidence; where it does not decide, the candidate's too
        logged = [e for e in events if isinstance(e, dict)]
        detection = detect(logged, log.head.version)
        if not detection.decided:
            detection = detect([*logged, {"type": SCHEDULE_CHANGE, "data": payload}], log.head.version)
        profile = detection.profile
    try:
        folded = check_candidate(events, payload, seed, profile, ideal=reading.ideal)
    except ScheduleLogError as err:
        where = err.index if err.index is not None else index
        return CandidateVerdict(path, False, True, where, stage_of(err), err.rule, err.pointer, err.message)
    return CandidateVerdict(path, True, True, index, active=tuple(r.to_json() for r in folded.active))
