"""Declarative shapes of the v1 `schedule/change` payload: the single source of truth.

Every object in the protocol is an `ObjectShape` (exact keys, writer order) of `Field`s,
each holding a scalar `Spec`. The strict decoder (`changes.py`) checks values against these
specs, and the JSON Schema generator renders the same specs, so no shape is written twice.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property

from .cron import CronSyntaxError, parse_cron
from .instant import is_whole_minute, parse_instant
from .jsvalue import (
    MAX_SAFE_INTEGER,
    NegativeZero,
    has_non_ascii_edge_whitespace,
    is_number,
    is_trimmed_nonempty,
    js_length,
    number_equals,
    safe_integer,
    shown,
)
from .patterns import CANONICAL_CRON, INSTANT, TRIMMED, WHOLE_MINUTE_INSTANT, ZONE

JsonSchema = dict[str, object]

ZONE_SHAPE = re.compile(r"[A-Za-z][A-Za-z0-9_+.-]*(?:/[A-Za-z0-9_+.-]+)+")
"""Area/Location zone shape (ASCII only); the alternative is the exact string `UTC`."""

MAX_EVERY_SECONDS = MAX_SAFE_INTEGER // 1000
"""Largest `everySeconds` whose millisecond interval is still a safe integer."""


class Reject(Exception):
    """A value fails its spec; `rule` overrides the field's rule when set."""

    def __init__(self, message: str, rule: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.rule = rule


class Spec:
    """A rule for one JSON value: `check` returns the normalized value or raises Reject;
    `schema` renders the same rule as JSON Schema (2020-12)."""

    description = ""

    def check(self, value: object) -> object:
        raise NotImplementedError

    def schema(self) -> JsonSchema:
        raise NotImplementedError


@dataclass(frozen=True)
class Const(Spec):
    """Exactly this value (numbers compared by value, as JavaScript `===` does)."""

    value: str | int | bool
    description: str = ""

    def check(self, value: object) -> object:
        if isinstance(self.value, bool):
            if value is self.value:
                return value
        elif isinstance(self.value, int):
            if number_equals(value, self.value):
                return self.value
        elif type(value) is str and value == self.value:
            return value
        raise Reject(f"must be {self.value!r}, got {shown(value)}")

    def schema(self) -> JsonSchema:
        kind = "boolean" if isinstance(self.value, bool) else "integer" if isinstance(self.value, int) else "string"
        return {"type": kind, "const": self.value}


@dataclass(frozen=True)
class SafeInt(Spec):
    """A safe integer (integral floats count, booleans do not) within [minimum, maximum]."""

    minimum: int
    maximum: int = MAX_SAFE_INTEGER
    description: str = ""
    negative_zero: bool = True
    """False where the reference refuses `-0` (JSON Schema cannot state this)."""

    def check(self, value: object) -> object:
        n = safe_integer(value)
        if n is None:
            raise Reject(f"must be a safe integer, got {shown(value)}")
        if not self.minimum <= n <= self.maximum:
            raise Reject(f"must be within {self.minimum}..{self.maximum}, got {n}")
        if not self.negative_zero and isinstance(value, NegativeZero):
            raise Reject("must not be negative zero")
        return n

    def schema(self) -> JsonSchema:
        return {"type": "integer", "minimum": self.minimum, "maximum": self.maximum}


@dataclass(frozen=True)
class TrimmedText(Spec):
    """A non-empty string with no JavaScript whitespace at either end."""

    unicode_rule: str | None = None
    description: str = ""
    max_units: int | None = None
    """At most this many UTF-16 code units (JavaScript `.length`), when set."""
    length_rule: str | None = None

    def check(self, value: object) -> object:
        if type(value) is not str:
            raise Reject(f"must be a string, got {shown(value)}")
        if not is_trimmed_nonempty(value):
            if has_non_ascii_edge_whitespace(value):
                raise Reject(
                    "must not start or end with Unicode whitespace (JavaScript trim())",
                    self.unicode_rule,
                )
            raise Reject("must be non-empty and trimmed" if value else "must be non-empty")
        if self.max_units is not None and (units := js_length(value)) > self.max_units:
            raise Reject(f"must be at most {self.max_units} UTF-16 code units, got {units}", self.length_rule)
        return value

    def schema(self) -> JsonSchema:
        return {"type": "string", "minLength": 1, "pattern": TRIMMED}


@dataclass(frozen=True)
class Instant(Spec):
    """A canonical UTC instant; `whole_minute` also demands :00.000 seconds."""

    whole_minute: bool = False
    whole_minute_rule: str | None = None
    description: str = ""

    def check(self, value: object) -> object:
        if type(value) is not str:
            raise Reject(f"must be a canonical instant string, got {shown(value)}", "decode.instant")
        ms = parse_instant(value)
        if ms is None:
            raise Reject(f"{value!r} is not a canonical YYYY-MM-DDTHH:MM:SS.mmmZ instant", "decode.instant")
        if self.whole_minute and not is_whole_minute(ms):
            raise Reject(f"{value!r} is not a whole minute", self.whole_minute_rule)
        return value

    def schema(self) -> JsonSchema:
        return {"type": "string", "pattern": WHOLE_MINUTE_INSTANT if self.whole_minute else INSTANT}


@dataclass(frozen=True)
class CronText(Spec):
    """Restricted cron text that is already canonical."""

    description: str = ""

    def check(self, value: object) -> object:
        if type(value) is not str:
            raise Reject(f"must be a string, got {shown(value)}", "decode.cron.types")
        try:
            rule = parse_cron(value)
        except CronSyntaxError as err:
            raise Reject(str(err), "decode.cron.grammar") from None
        if rule.text != value:
            raise Reject(f"{value!r} is not canonical (expected {rule.text!r})", "decode.cron.canonical")
        return value

    def schema(self) -> JsonSchema:
        return {"type": "string", "pattern": CANONICAL_CRON}


@dataclass(frozen=True)
class ZoneText(Spec):
    """`UTC` or an ASCII Area/Location zone name (existence is a live check)."""

    description: str = ""

    def check(self, value: object) -> object:
        if type(value) is not str:
            raise Reject(f"must be a string, got {shown(value)}", "decode.cron.types")
        if value != "UTC" and ZONE_SHAPE.fullmatch(value) is None:
            raise Reject(f"{value!r} is neither UTC nor an Area/Location zone name")
        return value

    def schema(self) -> JsonSchema:
        return {"type": "string", "pattern": ZONE}


@dataclass(frozen=True)
class Text(Spec):
    """Any string."""

    description: str = ""

    def check(self, value: object) -> object:
        if type(value) is not str:
            raise Reject(f"must be a string, got {shown(value)}")
        return value

    def schema(self) -> JsonSchema:
        return {"type": "string"}


@dataclass(frozen=True)
class Number(Spec):
    """Any JSON number (JavaScript `typeof value === "number"`), never a boolean."""

    description: str = ""

    def check(self, value: object) -> object:
        if not is_number(value):
            raise Reject(f"must be a number, got {shown(value)}")
        return value

    def schema(self) -> JsonSchema:
        return {"type": "number"}


@dataclass(frozen=True)
class Enum(Spec):
    """One of these strings."""

    values: tuple[str, ...]
    description: str = ""

    def check(self, value: object) -> object:
        if type(value) is not str or value not in self.values:
            raise Reject(f"must be one of {', '.join(self.values)}, got {shown(value)}")
        return value

    def schema(self) -> JsonSchema:
        return {"type": "string", "enum": list(self.values)}


@dataclass(frozen=True)
class Boolean(Spec):
    """`true` or `false`."""

    description: str = ""

    def check(self, value: object) -> object:
        if type(value) is not bool:
            raise Reject(f"must be a boolean, got {shown(value)}")
        return value

    def schema(self) -> JsonSchema:
        return {"type": "boolean"}


@dataclass(frozen=True)
class IntegerIn(Spec):
    """One of these integers, compared as JavaScript `===` compares numbers (1.0 is 1)."""

    values: tuple[int, ...]
    description: str = ""

    def check(self, value: object) -> object:
        if not any(number_equals(value, v) for v in self.values):
            raise Reject(f"must be one of {', '.join(map(str, self.values))}, got {shown(value)}")
        return int(value)  # type: ignore[call-overload]

    def schema(self) -> JsonSchema:
        return {"type": "integer", "enum": list(self.values)}


@dataclass(frozen=True)
class AnyValue(Spec):
    """Any JSON value, null included."""

    description: str = ""

    def check(self, value: object) -> object:
        return value

    def schema(self) -> JsonSchema:
        return {}


@dataclass(frozen=True)
class ArrayOf(Spec):
    """An array whose items all satisfy `item`, with at least `min_items` of them."""

    item: Spec
    min_items: int = 0
    description: str = ""
    max_items: int | None = None

    def check(self, value: object) -> object:
        if type(value) is not list:
            raise Reject(f"must be an array, got {shown(value)}")
        if len(value) < self.min_items:
            raise Reject(f"must hold at least {self.min_items} item(s)")
        if self.max_items is not None and len(value) > self.max_items:
            raise Reject(f"must hold at most {self.max_items} item(s)")
        for n, item in enumerate(value):
            try:
                self.item.check(item)
            except Reject as err:
                raise Reject(f"item {n} {err.message}", err.rule) from None
        return value

    def schema(self) -> JsonSchema:
        out: JsonSchema = {"type": "array", "items": self.item.schema()}
        if self.min_items:
            out["minItems"] = self.min_items
        if self.max_items is not None:
            out["maxItems"] = self.max_items
        return out


@dataclass(frozen=True)
class Nested(Spec):
    """An object of a named shape (rendered as a `$ref` to its definition)."""

    shape: ObjectShape
    description: str = ""

    def check(self, value: object) -> object:
        problems = object_problems(value, self.shape)
        if problems:
            raise Reject(f"{self.shape.title}: {problems[0]}")
        return value

    def schema(self) -> JsonSchema:
        return {"$ref": f"#/$defs/{self.shape.name}"}


@dataclass(frozen=True)
class OneOf(Spec):
    """Exactly one of these alternatives (they never overlap)."""

    options: tuple[Spec, ...]
    description: str = ""

    def check(self, value: object) -> object:
        messages = []
        for option in self.options:
            try:
                return option.check(value)
            except Reject as err:
                messages.append(err.message)
        raise Reject("matches no alternative: " + " | ".join(messages))

    def schema(self) -> JsonSchema:
        return {"oneOf": [o.schema() for o in self.options]}


@dataclass(frozen=True)
class Field:
    """One exact key of an object: its JSON name, spec, violated rule and one-line meaning."""

    name: str
    spec: Spec
    rule: str
    description: str
    optional: bool = False
    """Optional means absent: a present key must satisfy the spec (null is not absent)."""
    attr: str = field(init=False, repr=False, compare=False)
    """The snake_case attribute name of the decoded value."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "attr", re.sub(r"(?<!^)([A-Z])", r"_\1", self.name).lower())


@dataclass(frozen=True)
class ObjectShape:
    """An object with exactly these keys, listed in writer order."""

    name: str
    title: str
    description: str
    fields: tuple[Field, ...]
    closed: bool = True
    """Closed objects have exactly their keys; open ones tolerate unknown keys."""
    forbidden: tuple[str, ...] = ()
    """Keys an open object must not carry."""

    @cached_property
    def keys(self) -> frozenset[str]:
        """The field names (computed once: every object checked against the shape asks)."""
        return frozenset(f.name for f in self.fields)

    @cached_property
    def required(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields if not f.optional)

    @cached_property
    def valued(self) -> tuple[Field, ...]:
        """The fields a decoded record holds: all but the tags that say which object it is
        (`kind`, `operation`, `version`; computed once: a log decodes thousands of objects)."""
        return tuple(f for f in self.fields if f.name not in ("kind", "operation", "version"))


def object_problems(value: object, shape: ObjectShape) -> list[str]:
    """Every way `value` breaks `shape`, in field order (empty when it conforms)."""
    return [problem.message for problem in shape_problems(value, shape)]


def located_problems(value: object, shape: ObjectShape) -> list[tuple[str, str]]:
    """`object_problems`, each with the JSON pointer (RFC 6901) of the key it is about, relative
    to `value` ("" for the value itself)."""
    return [(problem.pointer, problem.message) for problem in shape_problems(value, shape)]


@dataclass(frozen=True)
class ShapeProblem:
    """One way a value breaks a shape: where (a JSON pointer), the rule broken (the field's, or
    the keys rule of the object it is in), the shape of that object, and what: said of the field
    whose value breaks its spec (`field`), else of the object (its keys, or not being one)."""

    pointer: str
    rule: str
    shape: ObjectShape
    message: str
    field: str | None = None


def shape_problems(
    value: object,
    shape: ObjectShape,
    pointer: str = "",
    keys_rule: str = "",
    nested: bool = False,
    skip: frozenset[str] = frozenset(),
) -> Iterator[ShapeProblem]:
    """Every way `value` (at `pointer`) breaks `shape`, in field order: the one shape walker.

    A missing, unexpected or retired key breaks `keys_rule`; a field's value its own rule (or
    the one its spec names). With `nested`, an object field (and an array of objects) is looked
    into, each problem located where it is, its keys rule the field's rule + `.keys`, instead of
    summarised by the field's spec; fields named in `skip` are left to the caller."""
    if not isinstance(value, dict):
        yield ShapeProblem(pointer, keys_rule, shape, f"is not a JSON object, got {shown(value)}")
        return
    for name in shape.required:
        if name not in value:
            yield ShapeProblem(pointer + pointer_to(name), keys_rule, shape, f"lacks {name}")
    if shape.closed:
        for key in value:
            if key not in shape.keys:
                yield ShapeProblem(pointer + pointer_to(key), keys_rule, shape, f"has unexpected key {key}")
    for key in shape.forbidden:
        if key in value:
            yield ShapeProblem(pointer + pointer_to(key), keys_rule, shape, f"carries retired key {key}")
    for f in shape.fields:
        if f.name not in value or f.name in skip:
            continue
        item = value[f.name]
        if nested and isinstance(f.spec, Nested):
            yield from shape_problems(item, f.spec.shape, pointer + pointer_to(f.name), f.rule + ".keys", nested)
        elif nested and isinstance(f.spec, ArrayOf) and isinstance(f.spec.item, Nested) and isinstance(item, list):
            where = pointer + pointer_to(f.name)
            for n, member in enumerate(item):
                yield from shape_problems(member, f.spec.item.shape, f"{where}/{n}", f.rule + ".keys", nested)
        else:
            try:
                f.spec.check(item)
            except Reject as err:  # the pointer is made for a problem only: most values conform
                yield ShapeProblem(
                    pointer + pointer_to(f.name), err.rule or f.rule, shape, f"{f.name} {err.message}", f.name
                )


def pointer_to(*keys: str | int) -> str:
    """The JSON pointer (RFC 6901) of a path of keys: `~` and `/` escaped."""
    return "".join("/" + str(k).replace("~", "~0").replace("/", "~1") for k in keys)


# --- field specs shared by several shapes ------------------------------------------------

VERSION = Field("version", Const(1), "decode.version", "Protocol version: the number 1.")
ID = Field(
    "id",
    TrimmedText(),
    "decode.id",
    "Session-local schedule id: non-empty, no surrounding whitespace, compared exactly.",
)
PROMPT = Field(
    "prompt",
    TrimmedText(unicode_rule="decode.prompt.js-whitespace"),
    "decode.prompt",
    "Reminder text, already trimmed with JavaScript trim(); internal newlines allowed.",
)


def _scheduled_at(meaning: str, whole_minute: bool = False) -> Field:
    return Field(
        "scheduledAt",
        Instant(whole_minute=whole_minute, whole_minute_rule="decode.cron.whole-minute"),
        "decode.instant",
        meaning,
    )


def _kind(kind: str) -> Field:
    return Field("kind", Const(kind), "decode.record.kind", f"Record kind {kind!r}.")


TITLE = Field(
    "title",
    TrimmedText(unicode_rule="decode.title.js-whitespace", max_units=120, length_rule="decode.title.length"),
    "decode.title",
    "Optional short title: trimmed (JavaScript trim()), non-empty, at most 120 UTF-16 code units.",
    optional=True,
)

RECORD_SHAPES: dict[str, ObjectShape] = {
    "after": ObjectShape(
        "AfterRecord",
        "after record",
        "A one-shot reminder due afterSeconds after its creation.",
        (
            ID,
            _kind("after"),
            PROMPT,
            Field(
                "afterSeconds",
                SafeInt(1),
                "decode.after.afterSeconds",
                "Delay in seconds: a safe integer >= 1 (not checked against scheduledAt).",
            ),
            _scheduled_at("The single target instant."),
        ),
    ),
    "at": ObjectShape(
        "AtRecord",
        "at record",
        "A one-shot reminder at an absolute UTC instant.",
        (ID, _kind("at"), PROMPT, _scheduled_at("The single target instant.")),
    ),
    "every": ObjectShape(
        "EveryRecord",
        "every record",
        "A fixed-rate reminder; targets stay aligned to the first target.",
        (
            ID,
            _kind("every"),
            PROMPT,
            Field(
                "everySeconds",
                SafeInt(300, MAX_EVERY_SECONDS),
                "decode.every.everySeconds",
                "Interval in seconds: a safe integer >= 300 whose value in ms is also safe.",
            ),
            _scheduled_at("The earliest anchor-aligned occurrence not yet dispatched."),
        ),
    ),
    "cron": ObjectShape(
        "CronRecord",
        "cron record",
        "A calendar reminder: restricted five-field cron evaluated in an IANA zone.",
        (
            ID,
            _kind("cron"),
            PROMPT,
            Field(
                "cron",
                CronText(),
                "decode.cron.grammar",
                "Canonical restricted cron text (five numeric fields, single spaces).",
            ),
            Field(
                "timeZone",
                ZoneText(),
                "decode.cron.zone-shape",
                "UTC or an IANA Area/Location name (existence is checked only live).",
            ),
            _scheduled_at("The earliest calendar occurrence not yet dispatched (whole minute).", True),
        ),
    ),
}


TITLED_RECORD_SHAPES: dict[str, ObjectShape] = {
    kind: ObjectShape(shape.name, shape.title, shape.description, (*shape.fields, TITLE))
    for kind, shape in RECORD_SHAPES.items()
}
"""The record shapes of a profile whose records may carry a title (fixed-rate)."""


def _instant_field(name: str, meaning: str) -> Field:
    return Field(name, Instant(), "decode.instant", meaning)


ACCEPTED_AT = _instant_field(
    "acceptedAt", "Instant the runtime accepted the recurring batch; shared by its dispatches."
)
OCCURRENCE_AT = _instant_field("occurrenceAt", "Cron occurrence delivered (frozen at dispatch).")
NEXT_SCHEDULED_AT = _instant_field(
    "nextScheduledAt", "The cron record's new target; absent when none exists up to year 9999."
)


def _op(name: str) -> Field:
    return Field("operation", Const(name), "decode.operation", f"Operation {name!r}.")


@dataclass(frozen=True)
class RecordUnion(Spec):
    """One record object, its shape selected by the `kind` discriminator (of `shapes`: a
    profile's own; every calendar record shape when empty)."""

    shapes: tuple[ObjectShape, ...] = ()
    description: str = "The record; its kind selects the exact key set."

    def check(self, value: object) -> object:
        raise TypeError("records are decoded by invariant.changes.decode_record")

    def schema(self) -> JsonSchema:
        return {"oneOf": [{"$ref": f"#/$defs/{s.name}"} for s in self.shapes or tuple(RECORD_SHAPES.values())]}


def create_shape(records: tuple[ObjectShape, ...]) -> ObjectShape:
    """The create payload of a vocabulary whose records have these shapes."""
    schedule = Field("schedule", RecordUnion(records), "decode.create.schedule", "The record.")
    return ObjectShape(
        CREATE_SHAPE.name, CREATE_SHAPE.title, CREATE_SHAPE.description, (*CREATE_SHAPE.fields[:2], schedule)
    )


CREATE_SHAPE = ObjectShape(
    "CreateChange",
    "create",
    "Adds one record; its id must never have been created before in the owned log.",
    (VERSION, _op("create"), Field("schedule", RecordUnion(), "decode.create.schedule", "The record.")),
)
DELETE_SHAPE = ObjectShape(
    "DeleteChange",
    "delete",
    "Removes one active record.",
    (VERSION, _op("delete"), ID),
)

#: Dispatch shapes are told apart by their exact key sets alone.
DISPATCH_SHAPES: dict[str, ObjectShape] = {
    "one-shot": ObjectShape(
        "OneShotDispatch",
        "one-shot dispatch",
        "Ends an after or at record.",
        (VERSION, _op("dispatch"), ID),
    ),
    "every": ObjectShape(
        "EveryDispatch",
        "every dispatch",
        "Advances an every record; occurrence and next target are derived from acceptedAt.",
        (VERSION, _op("dispatch"), ID, ACCEPTED_AT),
    ),
    "cron-final": ObjectShape(
        "CronFinalDispatch",
        "final cron dispatch",
        "Delivers a cron occurrence and ends the record (no occurrence left up to 9999).",
        (VERSION, _op("dispatch"), ID, OCCURRENCE_AT, ACCEPTED_AT),
    ),
    "cron": ObjectShape(
        "CronDispatch",
        "cron dispatch",
        "Delivers a cron occurrence and moves the record to nextScheduledAt.",
        (VERSION, _op("dispatch"), ID, OCCURRENCE_AT, ACCEPTED_AT, NEXT_SCHEDULED_AT),
    ),
}
DISPATCH_BY_KEYS: dict[frozenset[str], str] = {s.keys: k for k, s in DISPATCH_SHAPES.items()}

OPERATIONS = ("create", "delete", "dispatch")
