"""Decoded `schedule/change` values (frozen) and the strict v1 decoder.

The decoder walks the declarative shapes of `shapes.py`; a violation raises
`ScheduleLogError` with the rule id of the failing field and a JSON pointer into the payload.
Values come out normalized (integral floats become ints) and serialize back with `to_json()`
in the writer's key order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from itertools import repeat
from typing import ClassVar

from .errors import ScheduleLogError
from .jsvalue import json_type, shown
from .profiles import Profile, get_profile
from .shapes import (
    CREATE_SHAPE,
    DELETE_SHAPE,
    DISPATCH_BY_KEYS,
    DISPATCH_SHAPES,
    OPERATIONS,
    RECORD_SHAPES,
    TITLED_RECORD_SHAPES,
    VERSION,
    Field,
    ObjectShape,
    Reject,
)

PROTOCOL_VERSION = 1


def _shape_json(obj: object, shape: ObjectShape, constants: Mapping[str, object]) -> dict[str, object]:
    """Serialize a value type by its shape: writer key order, absent optionals omitted."""
    out: dict[str, object] = {}
    for f in shape.fields:
        value = constants[f.name] if f.name in constants else getattr(obj, f.attr)
        if value is not None:
            out[f.name] = value
    return out


@dataclass(frozen=True)
class AfterRecord:
    """One-shot record due `after_seconds` after creation (target: `scheduled_at`)."""

    id: str
    prompt: str
    after_seconds: int
    scheduled_at: str
    title: str | None = None
    """A title (fixed-rate profile only; None: none)."""
    kind: ClassVar[str] = "after"

    def to_json(self) -> dict[str, object]:
        return _shape_json(self, TITLED_RECORD_SHAPES[self.kind], {"kind": self.kind})


@dataclass(frozen=True)
class AtRecord:
    """One-shot record at an absolute instant."""

    id: str
    prompt: str
    scheduled_at: str
    title: str | None = None
    """A title (fixed-rate profile only; None: none)."""
    kind: ClassVar[str] = "at"

    def to_json(self) -> dict[str, object]:
        return _shape_json(self, TITLED_RECORD_SHAPES[self.kind], {"kind": self.kind})


@dataclass(frozen=True)
class EveryRecord:
    """Fixed-rate record; `scheduled_at` is the earliest undelivered aligned target."""

    id: str
    prompt: str
    every_seconds: int
    scheduled_at: str
    title: str | None = None
    """A title (fixed-rate profile only; None: none)."""
    kind: ClassVar[str] = "every"

    def to_json(self) -> dict[str, object]:
        return _shape_json(self, TITLED_RECORD_SHAPES[self.kind], {"kind": self.kind})


@dataclass(frozen=True)
class CronRecord:
    """Calendar record; `scheduled_at` is the earliest undelivered occurrence."""

    id: str
    prompt: str
    cron: str
    time_zone: str
    scheduled_at: str
    title: str | None = None
    """A title (fixed-rate profile only; None: none)."""
    kind: ClassVar[str] = "cron"

    def to_json(self) -> dict[str, object]:
        return _shape_json(self, TITLED_RECORD_SHAPES[self.kind], {"kind": self.kind})


Record = AfterRecord | AtRecord | EveryRecord | CronRecord
RECORD_TYPES: dict[str, type[Record]] = {
    "after": AfterRecord,
    "at": AtRecord,
    "every": EveryRecord,
    "cron": CronRecord,
}
ONE_SHOT_KINDS = frozenset({"after", "at"})
RECURRING_KINDS = frozenset({"every", "cron"})


def with_target(record: Record, scheduled_at: str) -> Record:
    """The same record moved to a new target (recurring progression)."""
    if isinstance(record, EveryRecord):
        return EveryRecord(record.id, record.prompt, record.every_seconds, scheduled_at, record.title)
    if isinstance(record, CronRecord):
        return CronRecord(record.id, record.prompt, record.cron, record.time_zone, scheduled_at, record.title)
    return replace(record, scheduled_at=scheduled_at)


@dataclass(frozen=True)
class CreateChange:
    record: Record
    operation: ClassVar[str] = "create"

    def to_json(self) -> dict[str, object]:
        return {"version": PROTOCOL_VERSION, "operation": "create", "schedule": self.record.to_json()}


@dataclass(frozen=True)
class DeleteChange:
    id: str
    operation: ClassVar[str] = "delete"

    def to_json(self) -> dict[str, object]:
        return _shape_json(self, DELETE_SHAPE, {"version": PROTOCOL_VERSION, "operation": "delete"})


@dataclass(frozen=True)
class DispatchChange:
    """A dispatch; which optional instants are present decides its shape."""

    id: str
    occurrence_at: str | None = None
    accepted_at: str | None = None
    next_scheduled_at: str | None = None
    operation: ClassVar[str] = "dispatch"

    @property
    def shape(self) -> str:
        """`one-shot`, `every`, `cron-final` or `cron` (protocol.md §2.3)."""
        if self.accepted_at is None:
            return "one-shot"
        if self.occurrence_at is None:
            return "every"
        return "cron-final" if self.next_scheduled_at is None else "cron"

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"version": PROTOCOL_VERSION, "operation": "dispatch"}
        for name, attr in _DISPATCH_WRITERS[self.shape]:
            out[name] = getattr(self, attr)
        return out


_DISPATCH_WRITERS = {shape: tuple((f.name, f.attr) for f in s.fields[2:]) for shape, s in DISPATCH_SHAPES.items()}
"""Each dispatch shape's fields after version and operation, in writer order: a shape is chosen
by which instants are present, so all of its fields are (the owner writes one per member)."""


Change = CreateChange | DeleteChange | DispatchChange


def _field(obj: Mapping[str, object], f: Field, pointer: str) -> object:
    try:
        return f.spec.check(obj[f.name])
    except Reject as err:
        raise ScheduleLogError(err.rule or f.rule, f"{f.name} {err.message}", pointer=f"{pointer}/{f.name}") from None


def _exact_keys(obj: Mapping[str, object], shape: ObjectShape, rule: str, pointer: str) -> None:
    if obj.keys() == shape.keys:
        return
    keys = {str(k) for k in obj}  # JavaScript object keys are strings: a Python 5 reads as "5"
    extra = sorted(keys - shape.keys)
    missing = sorted(set(shape.required) - keys)
    if not extra and not missing:  # an optional key absent
        return
    parts = []
    if extra:
        parts.append(f"unexpected key(s) {', '.join(extra)}")
    if missing:
        parts.append(f"missing key(s) {', '.join(missing)}")
    raise ScheduleLogError(rule, f"{shape.title}: {'; '.join(parts)}", pointer=pointer)


def _fields(obj: Mapping[str, object], shape: ObjectShape, pointer: str) -> dict[str, object]:
    """The checked values of the shape's fields present in `obj`, by attribute (its tags are the
    caller's)."""
    return {f.attr: _field(obj, f, pointer) for f in shape.valued if not f.optional or f.name in obj}


def decode_record(value: object, profile: str | Profile = "calendar", pointer: str = "") -> Record:
    """Strictly decode one record object (the `schedule` of a create)."""
    prof = get_profile(profile)
    if not isinstance(value, dict):
        raise ScheduleLogError("decode.create.schedule", "schedule must be a JSON object", pointer=pointer)
    kind = value.get("kind")
    if type(kind) is not str or kind not in RECORD_SHAPES:
        shown_kind = "missing" if "kind" not in value else shown(kind)
        raise ScheduleLogError(
            "decode.record.kind", f"record kind {shown_kind} is not after, at, every or cron", pointer=pointer + "/kind"
        )
    if kind not in prof.record_kinds:
        raise ScheduleLogError(
            "decode.record.kind",
            f"record kind {kind!r} does not exist in profile {prof.name}",
            pointer=pointer + "/kind",
        )
    shape = (TITLED_RECORD_SHAPES if prof.record_title else RECORD_SHAPES)[kind]
    _exact_keys(value, shape, "decode.record.keys", pointer)
    return RECORD_TYPES[kind](**_fields(value, shape, pointer))  # type: ignore[arg-type]


def record_from_json(obj: object, profile: str | Profile = "calendar") -> Record:
    """Build a record from its log JSON (the inverse of `to_json`); raise ScheduleLogError."""
    return decode_record(obj, profile)


DISPATCH_INSTANTS = ("occurrenceAt", "acceptedAt", "nextScheduledAt")
"""A dispatch's optional instants: absent, never null."""


def decode_change(value: object, profile: str | Profile = "calendar") -> Change:
    """Strict v1 decoding of a `schedule/change` payload (protocol.md §2.9).

    Raises ScheduleLogError (index unset; pointer relative to the payload).
    """
    prof = get_profile(profile)
    if not isinstance(value, dict):
        raise ScheduleLogError("decode.payload", f"payload must be a JSON object, got {json_type(value)}")
    if "version" not in value:
        raise ScheduleLogError("decode.version", "version is missing", pointer="/version")
    _field(value, VERSION, "")
    op = value.get("operation")
    if type(op) is not str or op not in OPERATIONS:
        shown_op = "missing" if "operation" not in value else shown(op)
        raise ScheduleLogError(
            "decode.operation", f"operation {shown_op} is not create, delete or dispatch", pointer="/operation"
        )
    if op == "create":
        _exact_keys(value, CREATE_SHAPE, "decode.create.keys", "")
        return CreateChange(decode_record(value["schedule"], prof, "/schedule"))
    if op == "delete":
        _exact_keys(value, DELETE_SHAPE, "decode.delete.keys", "")
        return DeleteChange(**_fields(value, DELETE_SHAPE, ""))  # type: ignore[arg-type]
    if None in map(value.get, DISPATCH_INSTANTS, repeat(0)):  # most dispatches: none is null
        nulls = sorted(k for k in DISPATCH_INSTANTS if k in value and value[k] is None)
        raise ScheduleLogError(
            "decode.dispatch.shape",
            f"dispatch key(s) {', '.join(nulls)} are null; an optional key must be absent, not null",
            pointer=f"/{nulls[0]}",
        )
    shape_name = DISPATCH_BY_KEYS.get(frozenset(value))
    if shape_name is None or shape_name not in prof.dispatch_shapes:
        keys = ", ".join(sorted(map(str, value)))
        raise ScheduleLogError(
            "decode.dispatch.shape", f"dispatch keys {{{keys}}} match no dispatch shape of profile {prof.name}"
        )
    return DispatchChange(**_fields(value, DISPATCH_SHAPES[shape_name], ""))  # type: ignore[arg-type]
