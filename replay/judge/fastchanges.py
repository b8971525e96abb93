"""Schedule changes decoded through msgspec structs (issue 52): a valid payload's keys and JSON
types are checked in C, then each field's own spec checks its value, as the strict decoder
(`invariant.changes.decode_change`) would. The structs are made from the same shapes
(`invariant.shapes`), so they state no rule of their own; whatever they or a spec refuse is left
to the strict decoder, which decodes it and says why. The two never differ on a value the
structs take (`tests/test_change_structs.py`). `invariant` stays on the standard library:
the structs are the reader's, as msgspec is."""

from __future__ import annotations

from typing import Any, Literal, Union

import msgspec

from invariant.changes import (
    DISPATCH_INSTANTS,
    RECORD_TYPES,
    Change,
    CreateChange,
    DeleteChange,
    DispatchChange,
    decode_change,
)
from invariant.profiles import Profile
from invariant.shapes import (
    DELETE_SHAPE,
    DISPATCH_SHAPES,
    TITLED_RECORD_SHAPES,
    VERSION,
    ObjectShape,
    Reject,
    SafeInt,
    Spec,
)


class Structs:
    """msgspec structs made from the payload shapes: one for each operation (a create's record
    a union tagged by `kind`), every key of a shape a field of its struct, every struct closed. A field
    takes the JSON type its spec starts from (a string; an integer, without JavaScript's `300.0`,
    which the strict decoder reads); an optional one is absent by default, so null is refused
    as the strict decoder refuses it. `change` then runs each field's own spec and the profile's
    rules, and gives None wherever anything is refused."""

    def __init__(self) -> None:
        records = [self._struct(shape, "kind", kind) for kind, shape in TITLED_RECORD_SHAPES.items()]
        create = [("version", Literal[1]), ("schedule", Union[tuple(records)])]  # noqa: UP007
        every_key = DISPATCH_SHAPES["cron"]  # (every dispatch key, each optional: the shape is read from those present)
        dispatch = [("version", Literal[1], msgspec.NODEFAULT), *self._fields(every_key, optional=DISPATCH_INSTANTS)]
        self.by_operation: dict[str, type] = {
            "create": msgspec.defstruct("CreateStruct", create, **self._config("operation", "create")),
            "delete": self._struct(DELETE_SHAPE, "operation", "delete"),
            "dispatch": msgspec.defstruct("DispatchStruct", dispatch, **self._config("operation", "dispatch")),
        }
        """(Converted to one struct, not to their union: msgspec keeps what it learnt of a struct
        type, and learns a union again at every call.)"""
        self.checks = {
            shape.name: self._checked(shape) for shape in (DELETE_SHAPE, every_key, *TITLED_RECORD_SHAPES.values())
        }

    @staticmethod
    def _config(tag_field: str, tag: str) -> dict[str, Any]:
        return {"tag_field": tag_field, "tag": tag, "forbid_unknown_fields": True, "kw_only": True}

    def _struct(self, shape: ObjectShape, tag_field: str, tag: str) -> type:
        fields = self._fields(shape)
        if VERSION in shape.fields:
            fields.insert(0, ("version", Literal[1], msgspec.NODEFAULT))
        return msgspec.defstruct(shape.name + "Struct", fields, **self._config(tag_field, tag))

    @staticmethod
    def _fields(shape: ObjectShape, optional: tuple[str, ...] = ()) -> list[tuple[str, object, object]]:
        """Each valued field of `shape` as a struct field: its attribute, the JSON type its spec
        starts from, and for an optional one (or one named in `optional`) None when absent."""
        out: list[tuple[str, object, object]] = []
        for f in shape.valued:
            absent = None if f.optional or f.name in optional else msgspec.NODEFAULT
            out.append(
                (f.attr, int if isinstance(f.spec, SafeInt) else str, msgspec.field(name=f.name, default=absent))
            )
        return out

    @staticmethod
    def _checked(shape: ObjectShape) -> tuple[tuple[str, Spec], ...]:
        """The spec of each valued field of `shape`, by attribute."""
        return tuple((f.attr, f.spec) for f in shape.valued)

    def change(self, value: object, profile: Profile) -> Change | None:
        """The change `value` holds when the structs and every spec take it under `profile`,
        else None (the strict decoder then decodes it, and says what is wrong)."""
        change = self.parsed(value)
        return change if change is not None and allowed(change, profile) else None

    def parsed(self, value: object) -> Change | None:
        """The change `value` holds when the structs and every spec take it under the profile
        that allows the most (every kind, a title, every dispatch shape: `allowed` says what
        another profile takes of it), else None."""
        if type(value) is not dict or type(op := value.get("operation")) is not str or op not in self.by_operation:
            return None
        try:
            got: Any = msgspec.convert(value, self.by_operation[op])
        except (msgspec.ValidationError, UnicodeEncodeError):  # (a lone surrogate has no UTF-8 form to
            return None  # match a key by: the strict decoder's to read)
        try:
            if op == "create":
                record = got.schedule
                kind = record.__struct_config__.tag
                self._check(record, TITLED_RECORD_SHAPES[kind])
                return CreateChange(RECORD_TYPES[kind](*msgspec.structs.astuple(record)))  # (the record's field order)
            if op == "delete":
                self._check(got, DELETE_SHAPE)
                return DeleteChange(got.id)
            occurrence, accepted, following = got.occurrence_at, got.accepted_at, got.next_scheduled_at
            if (occurrence is not None, accepted is not None, following is not None) not in _DISPATCH_BY_INSTANTS:
                return None
            self._check(got, DISPATCH_SHAPES["cron"])
            return DispatchChange(got.id, occurrence, accepted, following)
        except Reject:
            return None

    def _check(self, got: Any, shape: ObjectShape) -> None:
        """Each present value of `got` checked by its field's spec in `shape` (Reject)."""
        for attr, spec in self.checks[shape.name]:
            if (v := getattr(got, attr)) is not None:
                spec.check(v)


def allowed(change: Change, profile: Profile) -> bool:
    """Whether `profile` takes a change the structs took (`Structs.parsed`): a create of a kind
    it has, titled only where it allows a title; a dispatch of a shape it has; any delete."""
    if isinstance(change, CreateChange):
        record = change.record
        return record.kind in profile.record_kinds and (record.title is None or profile.record_title)
    if isinstance(change, DispatchChange):
        return change.shape in profile.dispatch_shapes
    return True


_DISPATCH_BY_INSTANTS = {
    tuple(name in shape.keys for name in DISPATCH_INSTANTS): name for name, shape in DISPATCH_SHAPES.items()
}
"""Each dispatch shape by which of its optional instants are present."""
_STRUCTS = Structs()


def structured_change(value: object, profile: Profile) -> Change | None:
    """The change `value` holds when the structs and every spec take it under `profile`, else
    None (the strict decoder then decodes it, and says what is wrong)."""
    return _STRUCTS.change(value, profile)


_LAST: list[object] = [None, None]
"""The last payload `decode_change_fast` read and what the structs made of it: the judge folds
each change under every profile its evidence may choose, one after the other, and the structs'
work (all but `allowed`) is the same for each. Holding the payload keeps it alive, so `is`
cannot match another value."""


def decode_change_fast(value: object, profile: Profile) -> Change:
    """`decode_change`, through the structs first (the judge's `Folder` decodes with it)."""
    if value is not _LAST[0]:
        _LAST[0], _LAST[1] = value, _STRUCTS.parsed(value)
    change = _LAST[1]
    if change is not None and allowed(change, profile):  # type: ignore[arg-type]
        return change  # type: ignore[return-value]
    return decode_change(value, profile)
