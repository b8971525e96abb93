"""`schedlog shrink`: a log cut down to what keeps its verdict, for a bug report.

Delta debugging (ddmin) over the lines after the header: a candidate keeps the header and some
lines, its seqs renumbered densely (a chunk row's `seq0`, the cited `sourceEventSeqs` and a v3
replacement's `startSeq`/`endSeq` with them, a v0/v1 header's `seedLength` counting the inherited
events kept), and it is kept when it is judged as the original is: the same verdict and the same
rule (the violation's, else the first error finding's). What the rule needs stays; the rest goes.

A line is rewritten only where a number in it changes; any value JSON.parse reads is written
back (nested to any depth, numbers past the doubles as numbers that overflow alike).

With `redact`, every string of the header and the events but the structural ones (STRUCTURAL_KEYS:
types, ids, kinds, operations, instants, cron rules, zones, roles, tool names) becomes a
placeholder of the same UTF-16 length that keeps its JavaScript whitespace, control characters
and lone surrogates (the trim and length rules depend on them): `x` per character, `xx` per
astral one; a path (`cwd`) keeps its separators too, so an absolute path stays absolute; a tool
call's `arguments` (JSON text) is redacted inside. A line whose redaction would change the
verdict is kept as written, and counted.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from invariant.findings import Severity
from invariant.jsvalue import JS_WHITESPACE, js_compact_json, safe_integer
from invariant.logshapes import REPLACE_BOUNDS, cited_runs, format_version
from replay.judge.report import SessionReport
from replay.judge.verdicts import Verdict
from replay.judge.verify import verify_bytes, verify_log
from replay.lines import deepjson
from replay.lines.jsonline import JsonLineError, parse_header_line, parse_json_line
from replay.logs.logfile import SessionLog
from replay.reading import DEFAULT_READING, Reading
from replay.sources.bytesource import Data
from replay.sources.inputs import once
from replay.sources.sqlitenames import maybe_sqlite
from replay.tools.plaintext import NotHeld, plaintext, stored_log

STRUCTURAL_KEYS = frozenset(
    {
        "type", "id", "kind", "operation", "version", "scheduledAt", "acceptedAt", "nextScheduledAt",
        "occurrenceAt", "cron", "timeZone", "time_zone", "role", "name", "callId", "toolCallId", "surfaceOp",
        "parentSession", "origin", "agentPreset", "reason",
    }
)  # fmt: skip
"""Keys whose string values a rule reads as structure (vocabulary, identities compared across
events, instants and rules parsed): never redacted. Every other string is, where the verdict stays."""
PATH_KEYS = frozenset({"cwd"})
"""Keys whose strings are paths: redacted with their separators kept (v4: `cwd` must be absolute)."""
JSON_TEXT_KEYS = frozenset({"arguments"})
"""Keys whose strings are JSON text (a tool call's arguments): redacted inside, written compact."""


@dataclass(frozen=True)
class Shrunk:
    """A log cut down: its bytes, its report (the same verdict and rule as the original's), and
    how much went."""

    data: bytes
    report: SessionReport
    original_lines: int
    lines: int
    redacted: int
    kept_strings: int


class CannotShrink(ValueError):
    """The log gives nothing to shrink towards (ok, unreadable, or its header cannot be read)."""


def key_of(report: SessionReport) -> tuple[str, str | None]:
    """What a shrunk log must keep: the verdict, and the rule that decided it."""
    if report.violation is not None:
        return report.verdict.value, report.violation.rule
    errors = [f.code for f in report.findings if f.severity is Severity.ERROR]
    return report.verdict.value, errors[0] if errors else None


SHRINK_BYTES = 64 << 20
"""The most plaintext shrink holds: it judges every candidate in memory, one after another (a
log this large takes minutes). A larger log is judged first as any log is (in bounded memory),
and refused, said so, where it would be shrunk."""


def shrink_path(path: str, reading: Reading = DEFAULT_READING, redact: bool = False) -> Shrunk:
    """The log at `path` (plain or Zstandard, a pipe read once) shrunk as `shrink_log` shrinks
    it. It is judged first as `verify` judges it, without being held, and refused (CannotShrink)
    when there is nothing to keep or it is past SHRINK_BYTES."""
    if maybe_sqlite(path):
        return _shrink_stored(path, reading, redact)
    held = once(path)
    first = verify_log(SessionLog(path, reading, held))
    _refuse_unless_shrinkable(first)
    return shrink_log(path, _plaintext(path, held), reading, redact)


def _shrink_stored(path: str, reading: Reading, redact: bool) -> Shrunk:
    """A SQLite store's session shrunk as its JSONL log (the shrunk log is a JSONL log): a
    defect of the store's rows themselves has no JSONL form, and is refused, said so."""
    _refuse_unless_shrinkable(verify_log(SessionLog(path, reading)))
    try:
        return shrink_log(path, stored_log(path), reading, redact)
    except NotHeld as err:
        raise CannotShrink(str(err)) from None


def _refuse_unless_shrinkable(report: SessionReport) -> None:
    if report.verdict is Verdict.OK:
        raise CannotShrink("the log is ok: there is no problem to keep")
    if report.verdict is Verdict.UNREADABLE:
        why = next((f.message for f in report.findings if f.code == "format.unreadable"), "no session log")
        raise CannotShrink(f"the log is unreadable ({why}): there is no session log to shrink")


def _plaintext(path: str, held: Data | OSError | None) -> bytes:
    """A log's plaintext (a Zstandard one decompressed), at most SHRINK_BYTES; CannotShrink else."""
    try:
        return plaintext(path, held, SHRINK_BYTES, "shrink")[0]
    except NotHeld as err:
        raise CannotShrink(str(err)) from None


Writer = Callable[[bytes, Sequence[bytes]], bytes]
"""How a candidate log is written from a header line and the lines kept."""


def shrink_log(name: str, data: bytes, reading: Reading = DEFAULT_READING, redact: bool = False) -> Shrunk:
    """`data` (a plain log) cut down to a smallest set of lines that keeps its verdict and rule;
    with `redact`, its free text replaced (module docstring). Raises CannotShrink."""
    original = verify_bytes(name, data, reading)
    _refuse_unless_shrinkable(original)
    text = data.split(b"\n")
    head, lines = text[0], [line for line in text[1:] if line]  # (a torn tail is kept as a line)
    try:
        parse_header_line(head)
    except JsonLineError:
        raise CannotShrink("the header line is not JSON") from None
    want = key_of(original)
    for write in (_renumbered, _as_they_are):  # as they are: where renumbering alone changes the verdict
        if key_of(verify_bytes(name, write(head, lines), reading)) == want:
            break
    else:
        raise CannotShrink("the log's verdict depends on bytes shrinking cannot keep (a torn tail, say)")

    def keeps(head: bytes, kept: Sequence[bytes], write: Writer = write) -> bool:
        return key_of(verify_bytes(name, write(head, kept), reading)) == want

    kept = _ddmin(lines, lambda candidate: keeps(head, candidate))
    redacted = kept_strings = 0
    if redact:
        head, redacted, kept_strings = _redacted_header(head, lambda candidate: keeps(candidate, kept))
        kept, more, kept_more = _redacted(kept, lambda candidate: keeps(head, candidate))
        redacted, kept_strings = redacted + more, kept_strings + kept_more
    out = write(head, kept)
    return Shrunk(out, verify_bytes(name, out, reading), len(lines), len(kept), redacted, kept_strings)


def _ddmin(lines: list[bytes], keeps: Callable[[Sequence[bytes]], bool]) -> list[bytes]:
    """Zeller's ddmin: remove chunks of halving size while the property holds, down to single lines."""
    current = list(lines)
    chunk = max(1, len(current) // 2)
    while current:
        removed = False
        start = 0
        while start < len(current):
            candidate = current[:start] + current[start + chunk :]
            if keeps(candidate):
                current = candidate
                removed = True
            else:
                start += chunk
        if chunk == 1 and not removed:
            break
        chunk = max(1, chunk // 2) if not removed or chunk > 1 else 1
    return current


def _as_they_are(head: bytes, lines: Sequence[bytes]) -> bytes:
    return b"\n".join([head, *lines]) + b"\n"


def _json(value: object) -> bytes:
    """`value` as JSON text JSON.parse reads back alike: compact, or, for what the standard
    writer refuses (nesting past its recursion limit, a number past the doubles), the
    nesting-safe writer's exact form."""
    try:
        return js_compact_json(value).encode()
    except (ValueError, RecursionError):
        return deepjson.dumps(value, exact=True).encode()


def _events_in(value: object) -> int:
    """How many events a line stands for: a packed chunk row its members (`texts`, or a tool
    call row's `args`), an event one."""
    data = value.get("data") if isinstance(value, dict) and "seq0" in value else None
    members = data.get("texts", data.get("args")) if isinstance(data, dict) else None
    return len(members) if isinstance(members, list) else 1


def _renumbered(head: bytes, lines: Sequence[bytes]) -> bytes:
    """The header and `lines` with seqs dense from 0 (module docstring); a line whose numbers
    do not change, or that is not an event object, is kept as it is."""
    header = parse_header_line(head)
    values: list[object] = []
    for line in lines:
        try:
            values.append(parse_json_line(line))
        except JsonLineError:
            values.append(None)
    old_to_new: dict[int, int] = {}
    seq = 0
    inherited = 0
    seed = header.get("seedLength") if isinstance(header, dict) else None
    for value in values:
        old = safe_integer(value.get("seq0", value.get("seq"))) if isinstance(value, dict) else None
        if old is not None:
            for k in range(_events_in(value)):
                old_to_new[old + k] = seq + k
                if type(seed) is int and old + k < seed:
                    inherited += 1
        seq += _events_in(value)
    version = format_version(header) if isinstance(header, dict) else None
    bounds = REPLACE_BOUNDS.get(version or 0, REPLACE_BOUNDS[0])
    olds = sorted(old_to_new)
    out = [head if type(seed) is not int or seed == inherited else _json({**header, "seedLength": inherited})]  # type: ignore[dict-item]
    for line, value in zip(lines, values, strict=True):
        changed = _with_new_seqs(value, old_to_new, olds, bounds) if isinstance(value, dict) else None
        out.append(line if changed is None else _json(changed))
    return b"\n".join(out) + b"\n"


def _with_new_seqs(
    value: Mapping[str, object], old_to_new: dict[int, int], olds: list[int], bounds: tuple[str, ...]
) -> dict[str, object] | None:
    """An event or row with its seq, citations and replacement bounds renumbered, or None when
    none of them changes."""
    changed = dict(value)
    field = "seq0" if "seq0" in value else "seq"
    old = safe_integer(value.get(field))
    if old is not None and old in old_to_new:
        changed[field] = old_to_new[old]
    cited = value.get("sourceEventSeqs")
    if isinstance(cited, list):
        changed["sourceEventSeqs"] = _cited(cited, old_to_new, olds)
    op = value.get("surfaceOp")
    if isinstance(op, dict):
        changed["surfaceOp"] = {k: _new_seq(v, old_to_new) if k in bounds else v for k, v in op.items()}
    return None if changed == value and all(type(changed[k]) is type(value[k]) for k in changed) else changed


def _new_seq(value: object, old_to_new: dict[int, int]) -> object:
    """A seq renumbered, anything else (not a safe integer, or no kept event's) as it is."""
    old = safe_integer(value)
    return old_to_new.get(old, value) if old is not None else value


def _cited(cited: list[object], old_to_new: dict[int, int], olds: list[int]) -> list[object]:
    """Citations (seqs and [start, end] runs) mapped to the kept events, those of removed ones
    dropped; a run is mapped through the kept seqs it spans, never expanded (it may name 10^15);
    citations that are no such values (the shape check's findings) are kept as they are."""
    runs = cited_runs(cited)
    if runs is None:
        return cited
    new: list[object] = []
    for start, end in runs:
        new.extend(old_to_new[old] for old in olds[bisect_left(olds, start) : bisect_right(olds, end)])
    return new


def placeholder(text: str) -> str:
    """`text` with every character but JavaScript whitespace, controls and lone surrogates made
    `x` (an astral one `xx`): the same UTF-16 length, trimmed alike."""
    out = []
    for c in text:
        code = ord(c)
        if c in JS_WHITESPACE or code < 0x20 or 0x7F <= code < 0xA0 or 0xD800 <= code <= 0xDFFF:
            out.append(c)
        else:
            out.append("xx" if code > 0xFFFF else "x")
    return "".join(out)


def path_placeholder(text: str) -> str:
    """A path redacted: `placeholder` but for its separators (`/`, `\\` and a drive's `:`), so
    that an absolute path stays absolute."""
    return "".join(c if c in "/\\:" else placeholder(c) for c in text)


def _redact(value: object, key: str | None = None) -> tuple[object, int]:
    """`value` with its free text redacted, and how many strings were. Walked without
    recursion: a value may nest to any depth."""
    count = 0
    root: list[object] = [None]
    pending: list[tuple[object, str | None, list[object] | dict[str, object], int | str]] = [(value, key, root, 0)]
    while pending:
        item, name, parent, slot = pending.pop()
        if isinstance(item, dict):
            copy: dict[str, object] = dict.fromkeys(item)
            pending += [(v, k, copy, k) for k, v in item.items()]
            item = copy
        elif isinstance(item, list):
            items: list[object] = [None] * len(item)
            pending += [(v, name, items, i) for i, v in enumerate(item)]
            item = items
        elif isinstance(item, str) and name not in STRUCTURAL_KEYS:
            masked = _masked(item, name)
            count += masked != item
            item = masked
        parent[slot] = item  # type: ignore[index]
    return root[0], count


def _masked(text: str, key: str | None) -> str:
    """A string redacted by what its key says it holds."""
    if key in PATH_KEYS:
        return path_placeholder(text)
    if key in JSON_TEXT_KEYS:
        try:
            inner = parse_json_line(text.encode("utf-8", "surrogatepass"))
        except JsonLineError:
            return placeholder(text)
        if isinstance(inner, dict | list):
            return _json(_redact(inner)[0]).decode("utf-8", "surrogatepass")
    return placeholder(text)


def _redacted(lines: list[bytes], keeps: Callable[[Sequence[bytes]], bool]) -> tuple[list[bytes], int, int]:
    """Each line's free text redacted where the verdict stays: the lines, the strings redacted and
    the lines kept unredacted (their text decides the verdict)."""
    out = list(lines)
    redacted = kept = 0
    for i, line in enumerate(lines):
        masked = _masked_line(line, parse_json_line)
        if masked is None:
            continue
        candidate = [*out[:i], masked[0], *out[i + 1 :]]
        if keeps(candidate):
            out, redacted = candidate, redacted + masked[1]
        else:
            kept += 1
    return out, redacted, kept


def _redacted_header(head: bytes, keeps: Callable[[bytes], bool]) -> tuple[bytes, int, int]:
    """The header line with its free text and paths redacted where the verdict stays: the line,
    the strings redacted and 1 when it is kept as written (its text decides the verdict)."""
    masked = _masked_line(head, parse_header_line)
    if masked is None:
        return head, 0, 0
    return (*masked, 0) if keeps(masked[0]) else (head, 0, 1)


def _masked_line(line: bytes, parse: Callable[[bytes], object]) -> tuple[bytes, int] | None:
    """A line with its free text redacted and how many strings were; None when it is no JSON
    or holds nothing to redact."""
    try:
        value = parse(line)
    except JsonLineError:
        return None
    masked, count = _redact(value)
    return (_json(masked), count) if count else None


def summary(shrunk: Shrunk) -> str:
    """One line for people: what went, what stayed, the verdict kept."""
    verdict, rule = key_of(shrunk.report)
    text = f"shrunk {shrunk.original_lines} lines to {shrunk.lines}; still {verdict} ({rule})"
    if shrunk.redacted or shrunk.kept_strings:
        text += f"; {shrunk.redacted} string(s) redacted"
        if shrunk.kept_strings:
            text += f", {shrunk.kept_strings} line(s) kept as written (their text decides the verdict)"
    return text


__all__ = ["CannotShrink", "Shrunk", "key_of", "placeholder", "shrink_log", "shrink_path", "summary"]
