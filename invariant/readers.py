"""The session readers a log may be loaded by, and what each refuses of its events' types and
envelopes (session-log.md §11.4, formats.md §4; issue 69).

From the harness at 611615650f on (the released packages of the fixed-rate vocabulary,
`@deepseek-ai/dsh-session-persistence@0.1.0-rc.8`), the persistence read path refuses a log
holding an event of a type outside dsh-session's generated list of known types
(`KNOWN_SESSION_EVENT_TYPES`) unless the event carries `ignorable: true`: such a log was
likely written by a newer harness, and skipping a required event would rebuild a wrong session.
The refusal is `SessionFormatUnsupportedError`, not corruption: schedlog's verdict is
`unsupported`, as for a newer format version. It runs on the events after the legacy upgrades
(so an obsolete shape keeps its own diagnostic) and before the session layer validates their
envelopes (so an unknown type with a bad envelope is unsupported, not corrupt). The envelope's
`ignorable` key is accepted there with the value `true` only.

The readers before it (0d8e8baabe's, the calendar branch; the after-only revision's) take
every type, and their envelope has no `ignorable` key. Formats v2-v4 are read by later readers,
whose type lists no chapter records: their envelope's `ignorable: true` is accepted
(`logshapes.EVENT_SHAPES`), and no guard is modelled for them.

Which reader loads a v0 or v1 log follows from its profile (the vocabulary names the revision);
where the evidence leaves several, the report names the readers that would refuse it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .findings import Finding, Severity
from .jsvalue import shown
from .logshapes import MARKER_CUT_FROM
from .names import PROFILE_NAMES
from .sessionload import OBSOLETE_TYPES

KNOWN_TYPES_611615650F = frozenset(
    {
        "agent-preset/selected",
        "agent/inbox/spliced",
        "approval/asked",
        "approval/decided",
        "approval/policy",
        "assistant/chunk",
        "assistant/message",
        "command/done",
        "command/run",
        "compaction/end",
        "compaction/prune",
        "compaction/start",
        "compaction/summary",
        "feedback/record",
        "goal/change",
        "hook/invoked",
        "hook/result",
        "llm/retry",
        "llm/retry-started",
        "permission/preset",
        "plan/mode",
        "request/context",
        "request/header",
        "sandbox/mode",
        "schedule/change",
        "session/end-seed",
        "session/title",
        "session/title-llm-request",
        "step/end",
        "step/start",
        "subagent/descriptor",
        "team/member",
        "team/message/delivered",
        "team/message/queued",
        "team/task",
        "todo/write",
        "tool-workflow/agent-end",
        "tool-workflow/agent-start",
        "tool-workflow/run-end",
        "tool-workflow/run-start",
        "tool/call",
        "tool/code-dispatch",
        "tool/code-dispatch-start",
        "tool/result",
        "turn/end",
        "turn/start",
        "user/message",
        "web/deepseek-search-llm-request",
    }
)
"""dsh-session's `KNOWN_SESSION_EVENT_TYPES` at 611615650f, as the published 0.1.0-rc.8 ships
it (48 types; the reference tier holds the two equal)."""


UPGRADED_TYPES = {"steering/message": "user/message"}
"""The legacy types the reader upgrades before its guard runs (session-log.md §12): the guard
sees the type they become. (The obsolete ones it refuses before, as corrupt: sessionload.)"""


def guarded(tag: object, marked: bool) -> bool:
    """Whether an event of type `tag` (`marked`: `ignorable: true`) is one the 611615650f
    reader's guard refuses: unmarked, of a type outside its list after the upgrades (a type that
    is no string counts: the guard runs before the envelope is validated)."""
    return not marked and (type(tag) is not str or _RELEASED.refuses_type(tag))


@dataclass(frozen=True)
class Reader:
    """A persistence reader of v0 and v1 logs: the revision it is, the profile whose
    vocabulary it folds, its known event types (None: every type loads), and whether its
    envelope takes `ignorable: true`."""

    revision: str
    profile: str
    known_types: frozenset[str] | None
    ignorable: bool

    def refuses_type(self, tag: str) -> bool:
        """Whether an unmarked event of type `tag` makes this reader's guard refuse the log: a
        type outside its list once upgraded (UPGRADED_TYPES). An obsolete type is refused
        before the guard, as corrupt (sessionload.OBSOLETE_TYPES), whatever the reader."""
        known = self.known_types
        return known is not None and tag not in OBSOLETE_TYPES and UPGRADED_TYPES.get(tag, tag) not in known


_RELEASED = Reader("611615650f (0.1.0-rc.8)", "fixed-rate", KNOWN_TYPES_611615650F, True)
READERS = {
    "after-only": Reader("after-only revision", "after-only", None, False),
    "calendar": Reader("0d8e8baabe", "calendar", None, False),
    "fixed-rate": _RELEASED,
    "fixed-rate-exact": _RELEASED,
}
"""The reader of each profile's v0 and v1 logs."""
assert set(READERS) == set(PROFILE_NAMES)


@dataclass(frozen=True)
class TypesSeen:
    """What a reading saw of its committed events' types and markers (the records stage keeps
    the first of each, in order, and nothing more)."""

    unknown: tuple[int, int, object] | None = None
    """The first event (its seq, line and type) of a type outside KNOWN_TYPES_611615650F and
    not marked ignorable (a type that is no string counts: the guard runs before the envelope
    is validated)."""
    marked: tuple[int, int] | None = None
    """The first event (its seq and line) marked `ignorable: true`."""


NOTHING_SEEN = TypesSeen()


@dataclass(frozen=True)
class Refusals:
    """What the readers that may load a log say of its types and markers: whether its reader
    refuses it as unsupported (the guard), whether it refuses it as corrupt (a marker its
    envelope has no key for), and the findings that say so."""

    unsupported: bool = False
    corrupt: bool = False
    findings: tuple[Finding, ...] = ()


def read_by_profile(version: int | None) -> bool:
    """Whether the log's reader follows from its profile (READERS): a v0 or v1 log. A v2+ log's
    readers take the marker and no guard is modelled for them; a headerless one has none."""
    return version is not None and version < MARKER_CUT_FROM


def refusals(seen: TypesSeen, profiles: tuple[str, ...], version: int | None, strict: bool) -> Refusals:
    """The refusals of the reader of a v0 or v1 log judged with `profiles` (one: the profile is
    known, given or decided by the evidence; several: the candidates the evidence left, then
    no verdict changes and a warning names the readers that would refuse it). In lenient mode
    (the fixture reader, which has no guard) the guard's refusal is a warning, a marker's an
    envelope warning, as every envelope problem is there."""
    if not read_by_profile(version) or seen == NOTHING_SEEN:
        return Refusals()
    readers = list(dict.fromkeys(READERS[name] for name in profiles))
    said = [(reader, why) for reader in readers if (why := _refused(reader, seen)) is not None]
    if not said:
        return Refusals()
    if len(readers) > 1:
        whom = "; ".join(f"the {r.revision} reader ({r.profile}) {why.text}" for r, why in said)
        message = f"the profile is undecided ({', '.join(profiles)}), and so is the reader: {whom}"
        first = said[0][1]
        return Refusals(
            findings=(Finding("format.readers", Severity.WARNING, message, first.line, first.key, first.seq),)
        )
    reader, why = said[0]
    if reader.ignorable:  # the guard
        message = f"the {reader.revision} reader {why.text}" + ("" if strict else "; the fixture reader loads it")
        found = Finding("format.event.unknown", Severity.WARNING, message, why.line, why.key, why.seq)
        return Refusals(unsupported=strict, findings=(found,))
    message = (
        f"event envelope at line {why.line}: has unexpected key ignorable (the {reader.revision} reader's has none)"
    )
    severity = Severity.ERROR if strict else Severity.WARNING
    return Refusals(
        corrupt=strict, findings=(Finding("format.envelope", severity, message, why.line, why.key, why.seq),)
    )


@dataclass(frozen=True)
class _Why:
    """Why a reader refuses a log, and the event it refuses it for (its seq, line, and the key)."""

    text: str
    seq: int
    line: int
    key: str

    def finding(self, code: str, severity: Severity, message: str) -> Finding:
        """A finding of `code` at the refused event."""
        return Finding(code, severity, message, self.line, self.key, self.seq)


def _refused(reader: Reader, seen: TypesSeen) -> _Why | None:
    """Why `reader` refuses a log that shows `seen` (None: it does not)."""
    if reader.known_types is not None:
        if seen.unknown is None:
            return None
        seq, line, tag = seen.unknown
        text = (
            f"refuses the log as unsupported: event type {shown(tag)} (seq {seq}, line {line}) is unknown to it and "
            "not marked ignorable"
        )
        return _Why(text, seq, line, "/type")
    if seen.marked is None:
        return None
    seq, line = seen.marked
    return _Why(f"refuses the log as corrupt: its envelope has no key ignorable (line {line})", seq, line, "/ignorable")
