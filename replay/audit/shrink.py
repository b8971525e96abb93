"""`schedlog shrink`: a log cut down to what keeps its verdict, for a bug report.

Delta debugging (ddmin) over the lines after the header: a candidate keeps the header and some
lines, its seqs renumbered densely (a chunk row's `seq0`, the cited `sourceEventSeqs` and a v3
replacement's `startSeq`/`endSeq` with them, a v0/v1 header's `seedLength` counting the inherited
events kept), and it is kept when it is judged as the original is: the same verdict and the same
rule (the violation's, else the first error finding's). What the rule needs stays; the rest goes.

With `redact`, every string but the structural ones (types, ids, kinds, operations, instants,
cron rules, zones, roles, tool names) becomes a placeholder of the same UTF-16 length that keeps
its JavaScript whitespace, control characters and lone surrogates (the trim and length rules
depend on them): `x` per character, `xx` per astral one. A string whose redaction would change
the verdict is kept, and counted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from invariant.findings import Severity
from invariant.jsvalue import JS_WHITESPACE, js_compact_json
from replay.audit.verify import SessionReport, Verdict, verify_bytes
from replay.logs.jsonline import JsonLineError, parse_header_line, parse_json_line
from replay.reading import DEFAULT_READING, Reading

STRUCTURAL_KEYS = frozenset(
    {
        "type", "id", "kind", "operation", "version", "scheduledAt", "acceptedAt", "nextScheduledAt",
        "occurrenceAt", "cron", "timeZone", "role", "name", "callId", "toolCallId", "surfaceOp", "createdAt",
        "parentSession", "origin", "agentPreset", "cwd", "provider", "model", "reason",
    }
)  # fmt: skip
"""Keys whose string values a rule reads as structure: never redacted."""


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


def shrink_log(name: str, data: bytes, reading: Reading = DEFAULT_READING, redact: bool = False) -> Shrunk:
    """`data` (a plain log) cut down to a smallest set of lines that keeps its verdict and rule;
    with `redact`, its free text replaced (module docstring). Raises CannotShrink."""
    original = verify_bytes(name, data, reading)
    if original.verdict in (Verdict.OK, Verdict.UNREADABLE):
        raise CannotShrink(f"the log is {original.verdict.value}: there is no problem to keep")
    text = data.split(b"\n")
    head, lines = text[0], [line for line in text[1:] if line]  # (a torn tail is kept as a line)
    try:
        header = parse_header_line(head)
    except JsonLineError:
        raise CannotShrink("the header line is not JSON") from None
    want = key_of(original)
    writers: list[Callable[[Sequence[bytes]], bytes]] = [
        lambda kept: _renumbered(header, head, list(kept)),
        lambda kept: b"\n".join([head, *kept]) + b"\n",  # where renumbering alone changes the verdict
    ]
    for write in writers:

        def keeps(kept: Sequence[bytes], write: Callable[[Sequence[bytes]], bytes] = write) -> bool:
            return key_of(verify_bytes(name, write(kept), reading)) == want

        if keeps(lines):
            break
    else:
        raise CannotShrink("the log's verdict depends on bytes shrinking cannot keep (a torn tail, say)")
    kept = _ddmin(lines, keeps)
    redacted = kept_strings = 0
    if redact:
        kept, redacted, kept_strings = _redacted(kept, keeps)
    out = write(kept)
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


def _events_in(value: object) -> int:
    """How many events a line stands for: a packed chunk row its texts, an event one."""
    data = value.get("data") if isinstance(value, dict) and "seq0" in value else None
    texts = data.get("texts") if isinstance(data, dict) else None
    return len(texts) if isinstance(texts, list) else 1


def _renumbered(header: object, head: bytes, lines: list[bytes]) -> bytes:
    """The header and `lines` with seqs dense from 0 (module docstring); a line that is not an
    event object is kept as it is."""
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
        old = value.get("seq0", value.get("seq")) if isinstance(value, dict) else None
        if isinstance(old, int) and not isinstance(old, bool):
            for k in range(_events_in(value)):
                old_to_new[old + k] = seq + k
                if isinstance(seed, int) and old + k < seed:
                    inherited += 1
        seq += _events_in(value)
    out = [head if not isinstance(seed, int) or isinstance(seed, bool) else _with_seed(header, inherited)]
    for line, value in zip(lines, values, strict=True):
        if not isinstance(value, dict) or not any(k in value for k in ("seq", "seq0")):
            out.append(line)
            continue
        value = dict(value)
        field = "seq0" if "seq0" in value else "seq"
        if isinstance(value[field], int) and value[field] in old_to_new:
            value[field] = old_to_new[value[field]]
        cited = value.get("sourceEventSeqs")
        if isinstance(cited, list):
            value["sourceEventSeqs"] = _cited(cited, old_to_new)
        op = value.get("surfaceOp")
        if isinstance(op, dict):
            value["surfaceOp"] = {k: old_to_new.get(v, v) if k in ("startSeq", "endSeq") else v for k, v in op.items()}
        out.append(js_compact_json(value).encode())
    return b"\n".join(out) + b"\n"


def _with_seed(header: object, inherited: int) -> bytes:
    assert isinstance(header, dict)
    return js_compact_json({**header, "seedLength": inherited}).encode()


def _cited(cited: list[object], old_to_new: dict[int, int]) -> list[object]:
    """Citations (seqs and [start, end] runs) mapped to the kept events, those of removed ones dropped."""
    seqs: list[int] = []
    for item in cited:
        if isinstance(item, int):
            seqs.append(item)
        elif isinstance(item, list) and len(item) == 2 and all(isinstance(x, int) for x in item):
            seqs.extend(range(item[0], item[1] + 1))
    return [old_to_new[s] for s in seqs if s in old_to_new]


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


def _redact(value: object, key: str | None = None) -> tuple[object, int]:
    """`value` with its free text redacted, and how many strings were."""
    if isinstance(value, str):
        if key in STRUCTURAL_KEYS or value == placeholder(value):
            return value, 0
        return placeholder(value), 1
    if isinstance(value, dict):
        out, count = {}, 0
        for k, v in value.items():
            out[k], n = _redact(v, k)
            count += n
        return out, count
    if isinstance(value, list):
        items, count = [], 0
        for v in value:
            item, n = _redact(v, key)
            items.append(item)
            count += n
        return items, count
    return value, 0


def _redacted(lines: list[bytes], keeps: Callable[[Sequence[bytes]], bool]) -> tuple[list[bytes], int, int]:
    """Each line's free text redacted where the verdict stays: the lines, the strings redacted and
    the lines kept unredacted (their text decides the verdict)."""
    out = list(lines)
    redacted = kept = 0
    for i, line in enumerate(lines):
        try:
            value = parse_json_line(line)
        except JsonLineError:
            continue
        masked, count = _redact(value)
        if not count:
            continue
        candidate = [*out[:i], js_compact_json(masked).encode(), *out[i + 1 :]]
        if keeps(candidate):
            out, redacted = candidate, redacted + count
        else:
            kept += 1
    return out, redacted, kept


def summary(shrunk: Shrunk) -> str:
    """One line for people: what went, what stayed, the verdict kept."""
    verdict, rule = key_of(shrunk.report)
    text = f"shrunk {shrunk.original_lines} lines to {shrunk.lines}; still {verdict} ({rule})"
    if shrunk.redacted or shrunk.kept_strings:
        text += f"; {shrunk.redacted} string(s) redacted"
        if shrunk.kept_strings:
            text += f", {shrunk.kept_strings} line(s) kept as written (their text decides the verdict)"
    return text


__all__ = ["CannotShrink", "Shrunk", "key_of", "placeholder", "shrink_log", "summary"]
