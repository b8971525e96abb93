"""The judge as a streaming fold: a session's committed records in, one at a time; a state that
is saved at any committed line and taken up again; the report computed from the state at the end.

What it keeps between two records is bounded by what is live, never by the number of events:

- per profile still possible (`Track`): the fold's machine (active records, the ids it has seen
  and how each ended: the report lists them), the violation once found, the soft delivery
  checks' machine (invariant.reminders.Deliveries);
- the profile evidence: the distinct clues seen (a few fixed kinds), and of the recurring
  batches' `acceptedAt` what the evidence reads (`invariant.detect.Batches`);
- the fork cut (a v2+ log's last inherited marker; the fold of the changes before a later marker
  is dropped: they are the parent's);
- the lines of the changes a violation could point to (`_Lines`, pruned to what the folds
  still reference);
- the `schedule_*` calls and results (`Transcript`), and the Host era's delivered reminders.

Resume is: load the state (`Judge.resumed`), read the appended bytes, feed only their records;
a resumed report equals a cold one, as every rule sees the records in the same order.
"""

from __future__ import annotations

import gc
import pickle
from collections.abc import Mapping
from dataclasses import dataclass, field

from invariant import SCHEDULE_CHANGE, Folded, Folder, ScheduleLogError, Step
from invariant.detect import (
    PREFERENCE,
    Batches,
    Clue,
    Detection,
    accepted_at,
    change_clues,
    choose,
    era_clue,
    host_message_id,
    host_message_text,
    message_evidence,
    reachable_choices,
)
from invariant.findings import Finding, RelatedLocation, Violation
from invariant.jsvalue import safe_integer
from invariant.ledger import LedgerRow, ledger, owned_from
from invariant.logshapes import END_SEED
from invariant.profiles import Profile, get_profile
from invariant.reminders import Deliveries, ReminderMessage, reminder_messages
from invariant.tools.judge import TOOL_TYPES
from replay.judge.fastchanges import decode_change_fast
from replay.judge.transcript import Transcript
from replay.judge.verdicts import Verdict
from replay.lines.jsonline import Deep
from replay.logs.records import Entry


def violation_at(
    err: ScheduleLogError, line: int | None, lines: Mapping[int, int], header_line: int | None
) -> Violation:
    """The violation located: its line, and each related event's (an event's seq is its index).
    A seedLength out of bounds also points at the header that holds it."""
    related = [RelatedLocation(r.role, r.index, r.index, lines.get(r.index), r.pointer) for r in err.related]
    if err.rule == "fold.seed.bounds" and header_line is not None:
        related.insert(0, RelatedLocation("header", None, None, header_line, "/seedLength"))
    return Violation(
        code=err.code,
        rule=err.rule,
        index=err.index,
        seq=err.index,
        line=line,
        pointer=err.pointer,
        message=err.message,
        related=tuple(related),
    )


def unpickled(data: bytes) -> object:
    """`pickle.loads` with the garbage collector held off: a state is thousands of new objects,
    none garbage, and each collection they set off would walk the whole heap (a `watch` of a
    large log spent more on those walks than on the unpickling)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return pickle.loads(data)
    finally:
        if paused:
            gc.enable()


class Track:
    """One profile's fold of the owned schedule changes, and the delivery checks on its steps.

    `steps` (each change's entry and the step it made) is kept only where the caller asks for
    the judgement (explain, replay): it grows with the log, and is never saved."""

    def __init__(self, profile: Profile, seed: object, header_line: int | None, keep: bool) -> None:
        self.profile = profile
        self.owned = owned_from(seed) or 0
        self.violation: Violation | None = None
        self.stopped: Folded | None = None
        """The fold's state before the violating event (the fold checks before it changes anything)."""
        self.deliveries: Deliveries | None = Deliveries(profile)
        """The delivery checks, dropped once the evidence can no longer choose this profile
        (`reachable_choices`): only the chosen profile's are reported."""
        self.steps: list[tuple[Entry, Step | None]] | None = [] if keep else None
        self.folder: Folder | None
        try:
            self.folder = Folder(seed, profile, decode_change_fast)
        except ScheduleLogError as err:
            self.folder = None
            self.violation = violation_at(err, header_line, {}, header_line)

    def change(self, entry: Entry, lines: Mapping[int, int]) -> None:
        """The next schedule change (every event before it that holds none is skipped)."""
        folder = self.folder
        step = None
        if self.violation is None and folder is not None:
            folder.skip(entry.event_index - folder.count)
            event = entry.event
            try:
                step = folder.feed(event)
            except ScheduleLogError as err:
                self.violation = violation_at(err, entry.line, lines, None)
                self.stopped = folder.snapshot()
            else:
                if step is not None and self.deliveries is not None:
                    assert event is not None
                    self.deliveries.step(step, event.get("time"), entry.line)
        if self.steps is not None:
            self.steps.append((entry, step))

    def message(self, message: ReminderMessage) -> None:
        """A reminder message: one queued before the fork cut was the parent's, not heard."""
        if self.deliveries is not None and (not message.queued or message.index >= self.owned):
            self.deliveries.message(message)

    def delivered(self) -> list[Finding]:
        """The delivery findings of the chosen profile's fold (the log read: this ends them).
        The evidence never drops the checks of a profile it may still choose."""
        if self.deliveries is None:
            raise AssertionError(f"the delivery checks of {self.profile.name} were dropped, and it was chosen")
        return self.deliveries.finish()

    def referenced(self) -> set[int]:
        """The event indexes a violation found later may name (the fold's history)."""
        folder = self.folder
        if folder is None or self.violation is not None:
            return set()
        found = set(folder.seen.values())
        found.update(at for at, _ in folder.ended.values())
        found.update(at for at, _ in folder.target_at.values())
        if folder.batch_at is not None:
            found.add(folder.batch_at)
        return found

    def finish(self, event_count: int, lines: Mapping[int, int], header_line: int | None) -> Folded | None:
        """Close the fold over a log of `event_count` events: the fold's result, None where it is
        violated (`violation`, `stopped` say how)."""
        folder = self.folder
        if self.violation is not None or folder is None:
            return None
        folder.skip(event_count - folder.count)
        try:
            return folder.finish()
        except ScheduleLogError as err:
            self.violation = violation_at(err, header_line, lines, header_line)
            self.stopped = folder.snapshot()
            return None

    @property
    def verdict(self) -> Verdict:
        return Verdict.CORRUPT if self.violation is not None else Verdict.OK


@dataclass
class _Lines:
    """The line of each schedule change a violation may point to: every change's as it is read,
    pruned to those the folds still reference once it has doubled since (so it stays near the
    size of the folds' own history)."""

    at: dict[int, int] = field(default_factory=dict)
    bound: int = 64

    def add(self, index: int, line: int, tracks: list[Track]) -> None:
        self.at[index] = line
        if len(self.at) > self.bound:
            keep: set[int] = {index}
            for track in tracks:
                keep |= track.referenced()
            self.at = {i: n for i, n in self.at.items() if i in keep}
            self.bound = max(64, 2 * len(self.at))


@dataclass
class Judged:
    """What the judge found once the log is read: the profile, its track, the evidence."""

    profile: Profile
    track: Track
    folded: Folded | None
    detection: Detection | None
    others: dict[str, Verdict]
    seed: object


class Judge:
    """The streaming judge of one session log (see the module)."""

    def __init__(
        self, profile: Profile | None, seed_override: object, surface: str | None = None, keep: bool = False
    ) -> None:
        """`profile`: the reading's (None: the evidence chooses); `seed_override`: the reading's
        seedLength (None: the log's own); `surface`: the tool surface the calls are judged
        against (None: the one they point to); `keep`: keep each change's step (the judgement)."""
        self.profile = profile
        self.seed_override = seed_override
        self.keep = keep
        self.begun = False
        self.seed: object = 0
        self.marks_cut = False
        self.header_line: int | None = None
        self.tracks: list[Track] = []
        self.lines = _Lines()
        self.clues: dict[Clue, None] = {}
        self.decisive: frozenset[frozenset[str]] = frozenset()
        """The profile sets the decisive clues so far name (what `reachable_choices` reads)."""
        self.version: int | None = None
        self.batches = Batches()
        self.changes = 0
        self.delivered = 0
        self.host_messages: list[str] = []
        self.host_texts: list[str] = []
        self.transcript = Transcript(surface)

    # --- the state -------------------------------------------------------------------------

    def saved(self) -> bytes | None:
        """The state now, as bytes (a copy: the judge goes on reading past it); None where it
        holds a value nested past pickle's recursion (that log is read whole each time)."""
        try:
            return pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)
        except RecursionError:
            return None

    @staticmethod
    def resumed(state: bytes) -> Judge:
        """A judge going on from a saved state (trusted only as far as the caller checked the
        bytes it was taken from)."""
        judge = unpickled(state)
        if not isinstance(judge, Judge):
            raise TypeError("not a judge's state")
        return judge

    # --- reading ---------------------------------------------------------------------------

    def begin(self, header: Mapping[str, object] | None, marks_cut: bool, version: int | None) -> None:
        """Start judging a log whose header is `header` (None: none), once: the fork cut is the
        reading's seedLength, else the header's (v0/v1), else the last inherited marker's (v2+)."""
        if self.begun:
            return
        self.begun = True
        self.version = version
        self.marks_cut = marks_cut and self.seed_override is None
        self.header_line = 1 if header is not None else None
        if self.seed_override is not None:
            self.seed = self.seed_override
        elif marks_cut:
            self.seed = 0
        else:
            self.seed = 0 if header is None else header.get("seedLength", 0)
        self.transcript.owned_from = safe_integer(self.seed) or 0

    def _start(self) -> None:
        """(Re)start the folds at the fork cut: one per profile the evidence may choose."""
        names = [self.profile.name] if self.profile is not None else list(PREFERENCE)
        self.tracks = [Track(get_profile(n), self.seed, self.header_line, self.keep) for n in names]
        self._reach()

    def _heard(self, clues: list[Clue]) -> None:
        """Clues read: each kept once, in order; a new decisive one may put profiles out of reach."""
        known = self.clues
        for clue in clues:
            if clue not in known:
                known[clue] = None
                if clue.decisive and clue.profiles not in self.decisive:
                    self.decisive = self.decisive | {clue.profiles}
                    self._reach()

    def _reach(self) -> None:
        """Drop the delivery checks of the folds whose profile the evidence can no longer choose
        (they still fold: their verdicts are compared where the choice is undecided)."""
        if self.profile is not None or not self.tracks:
            return
        reach = reachable_choices(self.decisive, self.version)
        for track in self.tracks:
            if track.profile.name not in reach:
                track.deliveries = None

    def _folds(self) -> list[Track]:
        """The folds, made at the first record they read (most logs hold none: their state
        stays small)."""
        if not self.tracks:
            self._start()
        return self.tracks

    def feed(self, entry: Entry, deep: Deep | None = None) -> None:
        """Hear one committed record the reader yielded (schedule changes, cutting markers, the
        selected `schedule_*` calls and results and messages), in file order."""
        event = entry.event
        assert event is not None
        kind = event.get("type")
        if kind == SCHEDULE_CHANGE:
            data = event.get("data")
            self.changes += 1
            self._heard(change_clues(data))
            tracks = self._folds()
            self.lines.add(entry.event_index, entry.line, tracks)
            for track in tracks:
                track.change(entry, self.lines.at)
            self.transcript.change(data, entry.event_index)
            if (at := accepted_at(data)) is not None:
                self.batches.add(at)
            return
        if kind in TOOL_TYPES:  # a schedule_* call or its result
            self.transcript.add(event, entry.line, entry.event_index, deep)
            return
        if kind == END_SEED and self.marks_cut:  # (the reader yields a marker only where it cuts: `Records.cuts`)
            self._cut(entry)
        found, host = message_evidence(event)
        self._heard(found)
        for message in reminder_messages(event, entry.event_index):
            for track in self._folds():
                track.message(message)
        self.delivered += host
        if host and (message_id := host_message_id(event)) is not None:
            self.host_messages.append(message_id)
            self.host_texts.append(host_message_text(event))

    def _cut(self, marker: Entry) -> None:
        """A v2+ marker that cuts the fork here: everything before it is the parent's, so the
        folds start again from it (what they read before it is inherited, and judged there)."""
        self.seed = marker.event_index
        self.transcript.cut(marker.event_index)
        if not self.tracks:  # (no fold began: each begins at its first record, from this cut)
            return
        kept = [track.steps for track in self.tracks]
        self._start()
        for track, steps in zip(self.tracks, kept, strict=True):
            if steps is not None and track.steps is not None:
                track.steps = [(entry, None) for entry, _ in steps]

    # --- the end ---------------------------------------------------------------------------

    def judged(self, event_count: int, version: int | None, unreadable: bool, clues: tuple[Clue, ...] = ()) -> Judged:
        """The profile, its fold's result and the evidence (with the reader's `clues`), the log
        being read whole (this ends the judge: the state is not to be saved after)."""
        detection = None
        if self.profile is None:
            detection = choose([*self.clues, *era_clue(version), *self.batches.clues, *clues])
            profile = detection.profile
        else:
            profile = self.profile
        track = self._track(profile.name)
        folded = track.finish(event_count, self.lines.at, self.header_line)
        others: dict[str, Verdict] = {}
        if detection is not None and not detection.decided and self.batches.may_differ and not unreadable:
            for name in detection.candidates[1:]:  # would another possible profile answer differently?
                other = self._track(name)
                other.finish(event_count, self.lines.at, self.header_line)
                if other.verdict is not track.verdict:
                    others[name] = other.verdict
        return Judged(profile, track, folded, detection, others, self.seed)

    def _track(self, name: str) -> Track:
        for track in self._folds():
            if track.profile.name == name:
                return track
        raise KeyError(name)  # (never: a track runs for every profile the evidence may choose)

    def ledger(self, track: Track) -> tuple[LedgerRow, ...]:
        """The ledger's rows of the kept steps (a judge made with `keep`)."""
        assert track.steps is not None
        stop = None if track.violation is None else track.violation.index
        return ledger(((e.event_index, e.line, s) for e, s in track.steps), owned_from(self.seed), stop)

    def host_era(self, folded: Folded | None) -> list[Finding]:
        """The reminders the Host delivered, as information; legacy schedule/change reminders
        beside them are worth a warning, and those still active say which."""
        from invariant.findings import Severity

        if not self.delivered:
            return []
        found = [
            Finding("host.reminders", Severity.INFO, f"{self.delivered} reminder message(s) delivered by the Host")
        ]
        if self.changes:
            message = f"{self.changes} legacy schedule/change event(s) in a log the Host schedule service delivered to"
            active = [] if folded is None else [r.id for r in folded.active]
            if active:
                message += f"; still active, never to fire: {', '.join(map(repr, active))}"
            found.append(Finding("host.legacy-reminders", Severity.WARNING, message))
        return found
