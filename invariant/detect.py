"""Which protocol revision wrote a log (profiles.md §6, formats.md §6-§7): clues, then a choice.

A clue is something the log shows and the profiles it is consistent with. Decisive clues come
from the writer's own vocabulary (a cron record, a title, a framing text, a message source, a
tool description, the format version's era). One clue is inferred from the fold itself (recurring
batches closer than 300 s, which only the gate-free fixed-rate revision writes) and so is never
decisive: a log whose writer is otherwise unknown is judged by the strictest remaining profile,
and the report says which other profile would answer differently. Detection never hides a
violation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from .instant import MAX_MS, parse_instant
from .profiles import AFTER_ONLY, CALENDAR, FIXED_RATE, Profile

ALL = frozenset({CALENDAR.name, AFTER_ONLY.name, FIXED_RATE.name})
PREFERENCE = (CALENDAR.name, FIXED_RATE.name, AFTER_ONLY.name)
"""The order an undecided choice takes: calendar refuses what the others refuse (but titles,
which are decisive), so it never accepts what another profile would call corrupt."""
GATE_MS = 300_000

AFTER_ONLY_ONE_SHOT = AFTER_ONLY.one_shot_instruction
LATER_ONE_SHOT = CALENDAR.one_shot_instruction
CALENDAR_BATCH = CALENDAR.batch_instruction
FIXED_RATE_BATCH = FIXED_RATE.batch_instruction
AFTER_ONLY_TOOL = "v1 accepts only a non-empty prompt and a positive safe-integer after_seconds delay"
SELECTOR_TOOL = "Supply a non-empty prompt and exactly one selector"
REQUEST_HEADER = "request/header"
CLUE_TYPES = frozenset({"agent/inbox/spliced", "user/message", REQUEST_HEADER})
"""The event types that carry reminder messages (spliced into the inbox, or appended) and the
model-visible tool descriptions."""
NEEDLES = (b"SCHEDULE REMINDER", b'"schedule"', b'"tool-schedule"', b"schedule_create")
"""Bytes an event of CLUE_TYPES must hold to be worth reading for clues (a framing text, a
message source, a schedule_create description): most hold none, and are never walked."""


@dataclass(frozen=True)
class Clue:
    """What the log shows, and the profiles it is consistent with."""

    what: str
    profiles: frozenset[str]
    decisive: bool = True
    """Decisive clues narrow the choice (the writer's own vocabulary); the others are weighed
    only as `tie_break` says, and are listed as evidence."""
    tie_break: bool = False
    """Narrows what the decisive clues left, unless that would leave nothing (the era of a format
    version: what a release wrote, unless the log's own vocabulary says otherwise)."""


CRON_CLUE = Clue("a cron record", frozenset({CALENDAR.name}))
AT_CLUE = Clue("an at record", ALL - {AFTER_ONLY.name})
EVERY_CLUE = Clue("an every record", ALL - {AFTER_ONLY.name})
TITLE_CLUE = Clue("a record title", frozenset({FIXED_RATE.name}))
OCCURRENCE_CLUE = Clue("a dispatch with occurrenceAt", frozenset({CALENDAR.name}))
RECURRING_CLUE = Clue("a recurring dispatch", ALL - {AFTER_ONLY.name})
_KIND_CLUES = {"cron": CRON_CLUE, "at": AT_CLUE, "every": EVERY_CLUE}


def change_clues(payload: object) -> list[Clue]:
    """Clues of one `schedule/change` payload (made once: a log holds thousands of changes)."""
    if type(payload) is not dict and not isinstance(payload, Mapping):
        return []
    operation = payload.get("operation")
    if operation == "create":
        record = payload.get("schedule")
        if type(record) is not dict and not isinstance(record, Mapping):
            return []
        kind = record.get("kind")
        clues = [_KIND_CLUES[kind]] if type(kind) is str and kind in _KIND_CLUES else []
        if "title" in record:
            clues.append(TITLE_CLUE)
        return clues
    if operation == "dispatch":
        if "occurrenceAt" in payload or "nextScheduledAt" in payload:
            return [OCCURRENCE_CLUE]
        if "acceptedAt" in payload:
            return [RECURRING_CLUE]
    return []


@dataclass
class Batches:
    """The recurring batches' `acceptedAt`, fed one at a time in log order, as the evidence reads
    them: the inferred clue (`clues`: the first two distinct instants closer than 300 s, or out
    of order) and whether the folds of the profiles the decisive clues leave may differ
    (`may_differ`). It keeps the distinct texts only while no clue is found (one is enough), the
    last instant, and whether any lies at the gate's end of year 9999."""

    seen: set[str] = field(default_factory=set)
    last: int | None = None
    clue: Clue | None = None
    any: bool = False
    late: bool = False

    def add(self, text: str) -> None:
        self.any = True
        if text in self.seen:
            return
        ms = parse_instant(text)
        if ms is not None and ms > MAX_MS - GATE_MS:
            self.late = True
        if self.clue is not None:
            return
        self.seen.add(text)
        if ms is None:
            return
        last = self.last
        if last is not None and ms - last < GATE_MS:
            what = "recurring batches closer than 300 s" if ms >= last else "a recurring batch earlier than the last"
            self.clue = Clue(what, frozenset({FIXED_RATE.name}), decisive=False)
            self.seen = set()
            return
        self.last = ms

    @property
    def clues(self) -> list[Clue]:
        return [] if self.clue is None else [self.clue]

    @property
    def may_differ(self) -> bool:
        """Whether profiles the decisive evidence left possible may still fold the log
        differently: only the recurring gate sets them apart then (batches closer than 300 s or
        out of order, or the gate's exhaustion near the end of year 9999); every other
        difference is a decisive clue."""
        return self.any and (self.clue is not None or self.late)


def batch_clues(accepted_at: Iterable[str]) -> list[Clue]:
    """The inferred clue of a log's recurring batches (`Batches`): distinct recurring batches
    closer than 300 s, or out of order."""
    batches = Batches()
    for text in accepted_at:
        batches.add(text)
    return batches.clues


def message_clues(event: Mapping[str, object]) -> list[Clue]:
    """Clues of a reminder message (its framing text and source) or a logged tool description,
    wherever an event carries them."""
    return message_evidence(event)[0]


def message_evidence(event: Mapping[str, object]) -> tuple[list[Clue], int]:
    """(clues, reminders the Host delivered) of an event, in one walk of its data. A Host
    reminder is a user message whose source kind is `schedule` (formats.md §6): the Host era's,
    which leaves no schedule stream."""
    clues: list[Clue] = []
    delivered = 0
    for value in _walk(event.get("data")):
        if isinstance(value, str):
            clues.extend(_text_clues(value))
        elif isinstance(value, Mapping):
            kind = value.get("kind")
            if kind == "plugin":
                plugin = value.get("plugin")
                if plugin == "tool-schedule":
                    clues.append(Clue("reminders from the tool-schedule plugin", ALL - {FIXED_RATE.name}))
                elif plugin == "schedule":
                    clues.append(Clue("reminders from the schedule plugin", frozenset({FIXED_RATE.name})))
            elif value.get("role") == "user" and isinstance(source := value.get("source"), Mapping):
                delivered += source.get("kind") == "schedule"
    return clues, delivered


def host_message_id(event: Mapping[str, object]) -> str | None:
    """The id of a reminder the Host delivered (a `user/message` whose source kind is
    `schedule`), the one its receipt names; None for any other event."""
    data = event.get("data")
    if event.get("type") != "user/message" or not isinstance(data, Mapping):
        return None
    source = data.get("source")
    found = data.get("id")
    return (
        found if isinstance(source, Mapping) and source.get("kind") == "schedule" and isinstance(found, str) else None
    )


def message_text(message: Mapping[str, object]) -> str | None:
    """The text parts of a message's content, joined by newlines (None: its content is no array)."""
    content = message.get("content")
    if not isinstance(content, list):
        return None
    return "\n".join(t for p in content if isinstance(p, Mapping) and isinstance(t := p.get("text"), str))


def host_message_text(event: Mapping[str, object]) -> str:
    """The text of a Host reminder message (a `user/message` event; what names its tasks)."""
    data = event.get("data")
    return (message_text(data) if isinstance(data, Mapping) else None) or ""


def _text_clues(text: str) -> list[Clue]:
    clues = []
    if "[SCHEDULE REMINDER" in text:
        if AFTER_ONLY_ONE_SHOT in text:
            clues.append(Clue("after-only reminder framing", frozenset({AFTER_ONLY.name})))
        if LATER_ONE_SHOT in text:
            clues.append(Clue("calendar-era one-shot framing", ALL - {AFTER_ONLY.name}))
        if CALENDAR_BATCH in text:
            clues.append(Clue("calendar batch framing", frozenset({CALENDAR.name})))
        if FIXED_RATE_BATCH in text:
            clues.append(Clue("fixed-rate batch framing", frozenset({FIXED_RATE.name})))
    if AFTER_ONLY_TOOL in text:
        clues.append(Clue("the after-only schedule_create description", frozenset({AFTER_ONLY.name})))
    elif SELECTOR_TOOL in text:
        clues.append(Clue("the selector schedule_create description", ALL - {AFTER_ONLY.name}))
    return clues


def _walk(value: object, limit: int = 10_000) -> Iterable[object]:
    """Every value nested in `value` (breadth first, without recursion; at most `limit`)."""
    pending = [value]
    seen = 0
    while pending and seen < limit:
        item = pending.pop()
        seen += 1
        yield item
        if isinstance(item, Mapping):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)


def event_clues(event: Mapping[str, object]) -> list[Clue]:
    """The clues of one event: a schedule change's, or a message's or tool description's."""
    if event.get("type") == "schedule/change":
        return change_clues(event.get("data"))
    return message_clues(event)


def accepted_at(payload: object) -> str | None:
    """A dispatch's acceptedAt (the batch it belongs to), when it has one."""
    value = payload.get("acceptedAt") if type(payload) is dict or isinstance(payload, Mapping) else None
    return value if isinstance(value, str) else None


def detect(events: Iterable[Mapping[str, object]], version: int | None) -> Detection:
    """The profile of a log held in memory (its events, and its format version)."""
    clues: list[Clue] = []
    batches: list[str] = []
    for event in events:
        clues.extend(event_clues(event))
        if event.get("type") == "schedule/change" and (at := accepted_at(event.get("data"))) is not None:
            batches.append(at)
    return choose([*clues, *era_clue(version), *batch_clues(batches)])


MARKED_CLUE = Clue(
    "an event marked ignorable (read from 611615650f on)", frozenset({FIXED_RATE.name}), decisive=False, tie_break=True
)
"""A v0 or v1 log holding an event marked `ignorable: true` was written for a reader that takes
the marker, from 611615650f on (invariant.readers): the released revision, unless the log's own
vocabulary says otherwise."""


def era_clue(version: int | None) -> list[Clue]:
    """Formats v2+ were written by released builds, which never carried the calendar branch."""
    if version is not None and version >= 2:
        return [Clue(f"format v{version} (a released build)", ALL - {CALENDAR.name}, decisive=False, tie_break=True)]
    return []


@dataclass(frozen=True)
class Detection:
    profile: Profile
    evidence: tuple[str, ...]
    """What pointed to it (empty when nothing did)."""
    decided: bool
    """The decisive evidence left one profile; else `candidates` are the ones still possible."""
    candidates: tuple[str, ...]
    conflicting: bool = False
    """Decisive clues point to no common profile (the strictest is used)."""


def choose(clues: Iterable[Clue]) -> Detection:
    """The profile the clues point to (see the module docstring)."""
    return _choose(tuple(dict.fromkeys(clues)))


@lru_cache(maxsize=1024)
def _choose(clues: tuple[Clue, ...]) -> Detection:
    """`choose` of distinct clues, in order: kept, as most logs of a fleet bear the same few
    clues (or none), and a Detection is immutable."""
    by_name = {p.name: p for p in (CALENDAR, AFTER_ONLY, FIXED_RATE)}
    decisive = [clue.profiles for clue in clues if clue.decisive]
    possible = set(ALL).intersection(*decisive)
    conflicting = not possible  # then every profile a clue named stays possible, the strictest first
    if conflicting:
        possible = set().union(*decisive)
    narrowed = possible.intersection(*(clue.profiles for clue in clues if clue.tie_break))
    if narrowed:  # the tie-breaks together, where they leave something
        possible = narrowed
    candidates = tuple(name for name in PREFERENCE if name in possible)
    chosen = by_name[candidates[0]]
    pointing = tuple(c.what for c in clues if chosen.name in c.profiles)
    return Detection(chosen, pointing, len(candidates) == 1 and not conflicting, candidates, conflicting)


_EVERY_SET = tuple(frozenset(n for k, n in enumerate(sorted(ALL)) if mask >> k & 1) for mask in range(1, 1 << len(ALL)))
"""Every non-empty set of profiles: what any decisive clue to come may name (a superset of the
sets the clues above name, so no choice a clue could bring is missed)."""


@lru_cache(maxsize=1024)
def reachable_choices(decisive: frozenset[frozenset[str]], version: int | None) -> frozenset[str]:
    """The profiles `choose` may still pick for a log whose decisive clues so far name the sets
    `decisive`, of format `version`, whatever decisive clues come after. Its choice reads only
    the intersection and the union of the decisive sets (and the era's tie-break), and two sets
    more reach any intersection and union that more sets reach (one set narrows the intersection
    to any part of it and widens the union; two disjoint ones empty it), so the clues read with
    at most two of every set are all that need trying. Non-decisive clues never move the choice.
    Monotone: a profile once out of reach stays so (the clues to come only narrow what may come)."""
    base = [Clue("", names) for names in sorted(decisive, key=sorted)] + era_clue(version)
    found = {choose(base).profile.name}
    for first in _EVERY_SET:
        found.add(choose([*base, Clue("", first)]).profile.name)
        for second in _EVERY_SET:
            found.add(choose([*base, Clue("", first), Clue("", second)]).profile.name)
    return frozenset(found)
