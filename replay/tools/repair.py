"""`schedlog repair`: a session the harness refuses, given back without losing a byte (issue 68).

The harness's own means: an event set aside (invariant.setaside) keeps its `seq` and `time`,
takes a type no reader knows, marked `ignorable: true` where the log's reader takes the key,
and holds the original whole in its data, with why. Nothing is deleted but what the harness
drops itself (a torn final record) or what is already in the log byte for byte (a duplicated
line); every other line is written back as it was. In this order, each only where the log asks
for it:

1. a torn final record (no LF): dropped, as the load drops it; its bytes are in the report;
2. committed corruption (a defect before the last `turn/end`, session-log.md §7.2): an
   unparsable line (or a malformed row) is set aside, and a seq the log lacks is filled by a
   set-aside event saying so, only where the next good line's seq proves how many seqs the gap
   held; blank lines that held none are dropped; a line repeating an earlier one byte for byte
   is dropped; anything else is refused (CannotRepair) with the reason;
3. what the judge then still refuses: a schedule violation (the violating `schedule/change`
   set aside, then any later one the fold then refuses, never an inherited event of a fork
   child), or a session-layer refusal at one event (that event set aside where it clears it).

The result is verified before it is given back: `ok` (warnings allowed), every line not changed
byte-identical to the input's. A log that is already ok is given back unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import zstandard

from invariant.findings import Severity
from invariant.jsvalue import safe_integer
from invariant.readers import READERS
from invariant.setaside import set_aside
from replay.judge.report import SessionReport
from replay.judge.verdicts import Verdict
from replay.judge.verify import verify_bytes
from replay.lines import deepjson
from replay.lines.chunks import ROW_TAGS, RowError, decode_row
from replay.lines.jsonline import JsonLineError, parse_header_line, parse_json_line
from replay.reading import DEFAULT_READING, EVERYTHING, Reading
from replay.sources.sqlitenames import SESSION_SEPARATOR, maybe_sqlite, split_name
from replay.tools.plaintext import NotHeld, plaintext, stored_log


class CannotRepair(ValueError):
    """The log cannot be repaired by setting events aside (the reason says why)."""


class Unreadable(CannotRepair):
    """There is no session log to repair (it cannot be read, or holds none): a usage error."""


@dataclass(frozen=True)
class Change:
    """One change a repair made: what (`kind`: torn, set-aside, missing, blank, duplicate), at
    which input line (None: a seq the log lacked) and seq, the rule or finding that required it,
    and the original line's bytes (empty for a missing seq)."""

    kind: str
    line: int | None
    seq: int | None
    rule: str
    reason: str
    original: bytes

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "line": self.line,
            "seq": self.seq,
            "rule": self.rule,
            "reason": self.reason,
            "original": self.original.decode("utf-8", "replace"),
        }


@dataclass(frozen=True)
class Reminder:
    """What a repair does to one reminder the log names: what the log claimed of it (`created`,
    `created, then deleted`, `deleted`), what it is now (`active`, `cancelled`, `ended`,
    `never created`), and whether it will fire again (it is active)."""

    id: str
    claimed: str
    now: str

    @property
    def fires_again(self) -> bool:
        return self.now == "active"

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "claimed": self.claimed, "now": self.now, "firesAgain": self.fires_again}


@dataclass(frozen=True)
class Repaired:
    """A repair: the repaired log's bytes (Zstandard where the input was), what changed, the
    reports before and after, and what it does to the reminders."""

    path: str
    data: bytes
    changes: tuple[Change, ...]
    before: SessionReport
    after: SessionReport
    reminders: tuple[Reminder, ...] = field(default=())

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "verdictBefore": self.before.verdict,
            "verdictAfter": self.after.verdict,
            "changes": [c.to_json() for c in self.changes],
            "reminders": [r.to_json() for r in self.reminders],
            "findingsAfter": [f.to_json() for f in self.after.findings],
        }


@dataclass
class _Line:
    """A line of the log being repaired: its bytes, the input line it is (None: written by the
    repair), and whether the repair wrote it."""

    data: bytes
    origin: int | None
    written: bool = False


def repair_log(name: str, data: bytes, reading: Reading = DEFAULT_READING) -> Repaired:
    """`data` (a plain log's bytes) repaired (module docstring), as a plain log. Every finding
    counts, whatever `reading` selects (a finding ignored is still a refusal of the harness).
    Raises CannotRepair."""
    reading = replace(reading, selection=EVERYTHING)
    before = verify_bytes(name, data, reading)
    if before.verdict is Verdict.UNREADABLE:
        raise Unreadable("the log is unreadable: there is no session to give back")
    if before.verdict is Verdict.UNSUPPORTED:
        raise CannotRepair(
            "the log is unsupported (a newer format, or a type its reader refuses): not judged, not repaired"
        )
    if before.verdict is Verdict.OK:
        return Repaired(name, data, (), before, before, _reminders(before, data))
    failed: list[CannotRepair] = []
    for marked in _markings(before):
        try:
            return _repaired(name, data, reading, before, marked)
        except CannotRepair as err:
            failed.append(err)
    raise failed[0]


def _repaired(name: str, data: bytes, reading: Reading, before: SessionReport, marked: bool) -> Repaired:
    """The repair of a corrupt log, its set-aside events `marked` or not."""
    head, lines, torn = _split(data)
    changes: list[Change] = []
    if torn:
        line = len(lines) + 2
        changes.append(
            Change("torn", line, None, "format.torn-tail", "a final record without its LF: the load drops it", torn)
        )
    changes += _committed(lines, marked)
    report = _judged_until_ok(name, head, lines, marked, reading, before, changes)
    out = _joined(head, lines)
    _check_untouched(data, lines)
    return Repaired(name, out, tuple(changes), before, report, _reminders(report, data))


def _split(data: bytes) -> tuple[bytes, list[_Line], bytes]:
    """The header line, the complete lines after it, and a final record without LF."""
    parts = data.split(b"\n")
    torn = parts.pop()
    if not parts:
        raise CannotRepair("the log has no complete header line")
    head = parts[0]
    try:
        parse_header_line(head)
    except JsonLineError:
        raise CannotRepair("the header line is not JSON: there is no session to give back") from None
    return head, [_Line(line, k + 2) for k, line in enumerate(parts[1:])], torn


def _joined(head: bytes, lines: Sequence[_Line]) -> bytes:
    return b"".join(line + b"\n" for line in (head, *(entry.data for entry in lines)))


def _markings(report: SessionReport) -> tuple[bool, ...]:
    """Whether set-aside events are marked `ignorable: true`, in the order tried: on formats
    v2-v4, marked; on a v0/v1 log, as its reader takes the key (readers.READERS), and where the
    profile, so the reader, is undecided, marked first (the released reader takes it, and the
    marker tells it) if any possible reader takes it, then unmarked."""
    if report.format_version is not None and report.format_version >= 2:
        return (True,)
    profile = report.profile
    if profile is None:
        return (False,)
    if profile.source != "undecided" or not profile.candidates:
        return (READERS[profile.name].ignorable,)
    return (True, False) if any(READERS[name].ignorable for name in profile.candidates) else (False,)


def _events(raw: bytes) -> list[dict[str, object]] | None:
    """The events one line holds (a packed row's members), None where the load finds a defect."""
    try:
        value = parse_json_line(raw)
    except JsonLineError:
        return None
    if not isinstance(value, dict):
        return None
    tag = value.get("type")
    if isinstance(tag, str) and tag in ROW_TAGS and "seq0" in value:
        try:
            return list(decode_row(value, tag).events())
        except RowError:
            return None
    if safe_integer(value.get("seq")) is None:
        return None
    return [value]


UNPARSABLE = "the line does not parse as the load reads it (JSON, a packed row, a safe-integer seq)"
MISSING = "the log lacks this seq: the next line's seq proves it was there"


class _Scan:
    """The committed region rewritten line by line: the lines kept or written, the changes
    made, the seq the next event must have and the last event's time (what a set-aside event
    written in a gap takes)."""

    def __init__(self, marked: bool) -> None:
        self.marked = marked
        self.out: list[_Line] = []
        self.changes: list[Change] = []
        self.expected = 0
        self.time: object = 0
        self.by_seq: dict[int, bytes] = {}

    def keep(self, line: _Line, events: list[dict[str, object]]) -> None:
        self.by_seq[self.expected] = line.data
        self.out.append(line)
        self.expected += len(events)
        self.time = _safe_time(events[-1].get("time"), self.time)

    def aside(self, line: _Line) -> None:
        """The unparsable `line` set aside at the next seq."""
        self.note("set-aside", line, self.expected, "format.unparsable", UNPARSABLE)
        text = line.data.decode("utf-8", "replace")
        event = set_aside(self.expected, self.time, UNPARSABLE, "format.unparsable", self.marked, line=text)
        self.out.append(_Line(_json(event), line.origin, True))
        self.expected += 1

    def misplaced(self, line: _Line, events: list[dict[str, object]]) -> None:
        """A line whose own seq is wrong set aside (its value whole) at the seq it holds, the
        further seqs of a packed row filled."""
        reason = f"the line's seq is {_first_seq(events)}; its neighbours prove it holds {self.expected}"
        self.note("set-aside", line, self.expected, "format.seq-gap", reason)
        value = parse_json_line(line.data)
        time = _safe_time(events[0].get("time"), self.time)
        event = set_aside(self.expected, time, reason, "format.seq-gap", self.marked, event=value)
        self.out.append(_Line(_json(event), line.origin, True))
        self.expected += 1
        self.time = time
        for _ in events[1:]:
            self.missing()

    def missing(self) -> None:
        """The next seq, which the log lacks, filled by a set-aside event saying so."""
        self.note("missing", None, self.expected, "format.seq-gap", MISSING)
        event = set_aside(self.expected, self.time, MISSING, "format.seq-gap", self.marked)
        self.out.append(_Line(_json(event), None, True))
        self.expected += 1

    def note(self, kind: str, line: _Line | None, seq: int | None, rule: str, reason: str) -> None:
        origin, data = (None, b"") if line is None else (line.origin, line.data)
        self.changes.append(Change(kind, origin, seq, rule, reason, data))


def _committed(lines: list[_Line], marked: bool) -> list[Change]:
    """Repair, in place, the defects up to the last line holding a `turn/end` (the committed
    region the load refuses to lose, session-log.md §7.2); the changes made. A defect after it
    is a tail the harness drops itself, and stays."""
    decoded = [_events(line.data) for line in lines]
    ends = [k for k, line in enumerate(lines) if _ends_turn(line.data, decoded[k])]
    last = ends[-1] if ends else -1
    scan = _Scan(marked)
    k = 0
    while k <= last:
        events = decoded[k]
        if events is None:
            k = _unparsable_run(scan, lines, decoded, k)
            continue
        _placed(scan, lines[k], events, _next_seq(decoded, k))
        k += 1
    lines[:k] = scan.out  # (k: past the last turn/end, or past the run that held it)
    return scan.changes


def _placed(scan: _Scan, line: _Line, events: list[dict[str, object]], after: int | None) -> None:
    """A line that decodes, at the seq its neighbours prove (`after`: the next good line's first
    seq, None when none follows): kept where its seq is right; set aside there where its own seq
    is the defect (the next line follows it as though it were right); kept after the seqs the
    log lacks, filled, where its seq lies between them and the next line's; dropped where it
    repeats the line holding its seq byte for byte; refused otherwise."""
    seq, held = _first_seq(events), len(events)
    if seq == scan.expected:
        scan.keep(line, events)
    elif after == scan.expected + held:
        scan.misplaced(line, events)
    elif seq > scan.expected and (after is None or after >= seq + held):
        while scan.expected < seq:
            scan.missing()
        scan.keep(line, events)
    elif seq < scan.expected and scan.by_seq.get(seq) == line.data:
        scan.note("duplicate", line, seq, "format.seq-gap", "a line repeating an earlier one byte for byte")
    else:
        raise CannotRepair(
            f"line {line.origin}: seq {seq} where {scan.expected} is expected, and its neighbours do not tell "
            "which seq it holds"
        )


def _next_seq(decoded: list[list[dict[str, object]] | None], k: int) -> int | None:
    """The first seq of the next line after `k` that decodes (None: none does)."""
    return next((_first_seq(events) for events in decoded[k + 1 :] if events is not None), None)


def _ends_turn(raw: bytes, events: list[dict[str, object]] | None) -> bool:
    """Whether the load counts the line as holding a `turn/end` (§7.2: any decoded record of
    that type, whatever its seq, makes an earlier defect committed)."""
    if events is not None:
        return any(e.get("type") == "turn/end" for e in events)
    if b"turn/end" not in raw:
        return False
    try:
        value = parse_json_line(raw)
    except JsonLineError:
        return False
    return isinstance(value, dict) and value.get("type") == "turn/end"


def _unparsable_run(scan: _Scan, lines: list[_Line], decoded: list[list[dict[str, object]] | None], k: int) -> int:
    """The run of defective lines from `k` set aside (or, holding no seq and blank, dropped),
    where the next good line's seq proves how many events it held; the index after the run."""
    end = next((j for j in range(k, len(decoded)) if decoded[j] is not None), len(decoded))
    run = lines[k:end]
    if end == len(decoded):
        raise CannotRepair(
            f"line {run[0].origin} on: no line after the defect holds a seq that tells how many events it held"
        )
    held = _first_seq(decoded[end] or []) - scan.expected
    if held >= len(run) >= 1 and (held == len(run) or len(run) == 1):
        for line in run:
            scan.aside(line)
        for _ in range(held - len(run)):
            scan.missing()
    elif held == 0 and all(not line.data.strip() for line in run):
        for line in run:
            scan.note(
                "blank", line, None, "format.blank-line", "a blank line in the committed region, holding no event"
            )
    else:
        named = f"line {run[0].origin}" if len(run) == 1 else f"lines {run[0].origin}-{run[-1].origin}"
        raise CannotRepair(
            f"{named}: {len(run)} defective line(s) where the next good line's seq leaves {held} seq(s): "
            "which events they held cannot be told"
        )
    return end


def _first_seq(events: list[dict[str, object]]) -> int:
    seq = safe_integer(events[0].get("seq"))
    assert seq is not None  # (_events vouches for it)
    return seq


def _json(event: dict[str, object]) -> bytes:
    """An event as a line: compact, values exact (a number past the doubles stays as written)."""
    return deepjson.dumps(event, exact=True).encode("utf-8", "surrogatepass")


def _judged_until_ok(
    name: str,
    head: bytes,
    lines: list[_Line],
    marked: bool,
    reading: Reading,
    before: SessionReport,
    changes: list[Change],
) -> SessionReport:
    """Set aside, one at a time, the event the judge refuses the log for (a schedule violation,
    a session-layer refusal at one event) until it is ok; the last report. CannotRepair where
    the refusal is at no event, at an inherited one, at a line the repair wrote, or stays."""
    cut = before.seed_length if type(before.seed_length) is int else 0
    for _ in range(len(lines) + 1):
        report = verify_bytes(name, _joined(head, lines), reading)
        if report.verdict is Verdict.OK:
            return report
        line, seq, rule, why = _refusal(report)
        if report.verdict is not Verdict.CORRUPT:
            raise CannotRepair(f"the repaired log would be {report.verdict.value}: {why}")
        if line is None or seq is None:
            raise CannotRepair(f"refused for no one event ({rule}: {why}): no event set aside clears it")
        if seq < cut:
            raise CannotRepair(
                f"line {line}: {rule} at an inherited event (seq {seq}, before the fork cut {cut}): a fork "
                "child's inherited events are its parent's, never set aside"
            )
        entry = lines[line - 2]
        if entry.written:
            raise CannotRepair(f"line {line}: {rule} at an event the repair wrote: {why}")
        events = _events(entry.data)
        if events is None or len(events) != 1:
            raise CannotRepair(f"line {line}: {rule} at a line that is not one event: {why}")
        (event,) = events
        changes.append(Change("set-aside", entry.origin, seq, rule, why, entry.data))
        aside = set_aside(
            seq, _safe_time(event.get("time"), _time_before(lines, line - 2)), why, rule, marked, event=event
        )
        lines[line - 2] = _Line(_json(aside), entry.origin, True)
    raise CannotRepair("the repair did not converge")  # pragma: no cover (each round sets an input line aside)


def _safe_time(time: object, otherwise: object) -> object:
    """A set-aside event's time: the original's where it is a safe integer (the envelope's rule),
    else `otherwise` (its neighbour's): a bad time may be the very defect set aside."""
    return time if safe_integer(time) is not None else otherwise


def _time_before(lines: Sequence[_Line], k: int) -> object:
    """The time of the last event before line `k` with a safe-integer time (0 where none has)."""
    for line in reversed(lines[:k]):
        events = _events(line.data)
        if events and safe_integer(time := events[-1].get("time")) is not None:
            return time
    return 0


def _refusal(report: SessionReport) -> tuple[int | None, int | None, str, str]:
    """Where and why the judge refuses the log: the violation's line, seq, rule and message, else
    the first error finding's (else none: the verdict alone)."""
    if report.violation is not None:
        v = report.violation
        return v.line, v.seq, v.rule, v.message
    error = next((f for f in report.findings if f.severity is Severity.ERROR), None)
    if error is None:
        return None, None, report.verdict.value, report.verdict.value
    return error.line, error.index, error.code, error.message


def _check_untouched(data: bytes, lines: Sequence[_Line]) -> None:
    """Every line the repair did not write is the input's line of that number, byte for byte."""
    original = data.split(b"\n")
    for entry in lines:
        if not entry.written:
            assert entry.origin is not None and original[entry.origin - 1] == entry.data, entry.origin


def _framed(data: bytes) -> bytes:
    """`data` as the harness frames a Zstandard log: the header line alone in the first frame,
    the events in the next (one append batch), each frame with its checksum."""
    head, _, events = data.partition(b"\n")
    compressor = zstandard.ZstdCompressor(write_checksum=True)
    return compressor.compress(head + b"\n") + (compressor.compress(events) if events else b"")


def _reminders(after: SessionReport, data: bytes) -> tuple[Reminder, ...]:
    """Each reminder the log's schedule changes (`data`: the input) create or delete: what they
    claimed of it, and what it is in the repaired log (`after`)."""
    claimed: dict[str, str] = {}
    for line in data.split(b"\n")[1:]:
        events = _events(line) if b"schedule/change" in line else None  # (no other line is parsed)
        for event in events or ():
            if event.get("type") != "schedule/change" or not isinstance(data_ := event.get("data"), dict):
                continue
            op = data_.get("operation")
            schedule = data_.get("schedule")
            sid = schedule.get("id") if op == "create" and isinstance(schedule, dict) else data_.get("id")
            if not isinstance(sid, str) or op not in ("create", "delete"):
                continue
            claimed[sid] = "created" if op == "create" else ("created, then deleted" if sid in claimed else "deleted")
    folded = after.folded
    active = {r.id for r in folded.active} if folded is not None else set()
    seen = set(folded.seen_ids) if folded is not None else set()
    out = []
    for sid, said in claimed.items():
        if sid in active:
            now = "active"
        elif sid not in seen:
            now = "never created"
        elif said.endswith("deleted"):
            now = "cancelled"
        else:
            now = "ended"
        out.append(Reminder(sid, said, now))
    return tuple(out)


REPAIR_BYTES = 64 << 20
"""The most plaintext repair holds (it judges the log again for each event it sets aside)."""


def repair_path(path: str, reading: Reading = DEFAULT_READING) -> Repaired:
    """The log at `path` repaired (plain; Zstandard, written back framed as the harness frames
    it; or a SQLite store's session `store.db#ID`, written as its JSONL log). Read only."""
    try:
        if maybe_sqlite(path):
            if split_name(path) is None:
                raise CannotRepair(f"a store holds many sessions: repair one, {path}{SESSION_SEPARATOR}SESSION_ID")
            return repair_log(path, stored_log(path), reading)
        data, zstd = plaintext(path, None, REPAIR_BYTES, "repair")
    except NotHeld as err:
        raise Unreadable(str(err)) from None
    repaired = repair_log(path, data, reading)
    if not zstd:
        return repaired
    if repaired.changes:
        return replace(repaired, data=_framed(repaired.data))
    with open(path, "rb") as f:  # (given back as it is: its own framing, byte for byte)
        return replace(repaired, data=f.read())


def text_report(repaired: Repaired, output: str | None) -> str:
    """The repair as the text output tells it: what it did to the log, each change, what it does
    to the reminders, and the findings the repaired log still draws (control characters of the
    log escaped)."""
    from replay.terminal import printable

    before, after = repaired.before.verdict.value, repaired.after.verdict.value
    where = f"written to {output}" if output is not None else "dry run: nothing written"
    if not repaired.changes:
        head = f"{repaired.path}: {before}, nothing to repair; {where}"
    else:
        head = f"{repaired.path}: {before} -> {after}, {len(repaired.changes)} change(s); {where}"
    out = [head]
    for c in repaired.changes:
        at = f"line {c.line}" if c.line is not None else "no line"
        seq = f", seq {c.seq}" if c.seq is not None else ""
        out.append(f"  {at}{seq}: {c.kind} ({c.rule}): {c.reason}")
    if repaired.changes:
        if repaired.reminders:
            out.append("reminders:")
        for r in repaired.reminders:
            fires = "will fire again" if r.fires_again else "will not fire"
            out.append(f"  {r.id}: the log {r.claimed} it; now {r.now}, {fires}")
        if repaired.after.findings:
            out.append("the repaired log's findings:")
        for f in repaired.after.findings:
            line = f" line {f.line}" if f.line is not None else ""
            out.append(f"  {f.severity.value}{line}: {f.code}: {f.message}")
    return "".join(printable(line) + "\n" for line in out)
