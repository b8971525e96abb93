"""The two failure types of the protocol core.

A durable log that breaks the protocol raises `ScheduleLogError`; a model-supplied tool
argument that cannot become a record raises `ScheduleInputError`. Both carry a stable code
and a dotted rule id so that callers can report them without parsing messages.
"""

from __future__ import annotations

from dataclasses import dataclass

CORRUPT_SCHEDULE_LOG = "corrupt_schedule_log"


@dataclass(frozen=True)
class Related:
    """An earlier event a violated rule compares against: the first create of a reused id, the
    event that ended an id, the previous recurring batch, the event that set a record's target."""

    role: str
    index: int
    pointer: str = ""

    def to_json(self) -> dict[str, object]:
        return {"role": self.role, "index": self.index, "pointer": self.pointer}


class ScheduleLogError(Exception):
    """A schedule/change stream (or a candidate event) violates the v1 protocol.

    `code` is always `corrupt_schedule_log`, as in the reference; `rule` names the violated
    rule (e.g. `fold.gate`), `index` the offending event's position in the log (None for
    log-level rules such as seedLength bounds), `pointer` a JSON pointer into that event, and
    `related` the earlier events the rule compared it against.
    """

    code: str = CORRUPT_SCHEDULE_LOG

    def __init__(
        self,
        rule: str,
        message: str,
        *,
        index: int | None = None,
        pointer: str = "",
        related: tuple[Related, ...] = (),
    ) -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message
        self.index = index
        self.pointer = pointer
        self.related = related

    def at(self, index: int, prefix: str = "") -> ScheduleLogError:
        """Return this error re-anchored at event `index`, its pointer under `prefix`."""
        return ScheduleLogError(
            self.rule, self.message, index=index, pointer=prefix + self.pointer, related=self.related
        )

    def with_related(self, *related: Related) -> ScheduleLogError:
        """This error, naming the earlier events its rule compared against."""
        return ScheduleLogError(self.rule, self.message, index=self.index, pointer=self.pointer, related=related)

    def to_json(self) -> dict[str, object]:
        return {
            "code": self.code,
            "rule": self.rule,
            "index": self.index,
            "pointer": self.pointer,
            "message": self.message,
            "related": [r.to_json() for r in self.related],
        }

    def __repr__(self) -> str:
        return f"ScheduleLogError({self.rule!r}, index={self.index!r}, {self.message!r})"


class ScheduleInputError(Exception):
    """A tool argument is refused; `code` is one of the reference's closed error codes."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"ScheduleInputError({self.code!r}, {self.message!r})"
