"""What a tool surface is: each tool's declared parameters, the values it may return, its
declared error codes, and the checks its body makes before the service runs.

A logged `schedule_*` call is judged against a `Tool` (judge.py); the three surfaces (the
session-local tools of owner.md in local.py, the shipped Host 1.0 tools in host.py, seed 002's
design in seed.py) are built from these parts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from ..jsvalue import MAX_SAFE_INTEGER, js_length, js_trim, safe_integer, shown
from ..shapes import ArrayOf, Const, Enum, Field, Nested, ObjectShape, OneOf, SafeInt, Spec, Text

Refused = tuple[str, str]
"""The error code a tool's own checks return, and why."""
Refusal = Callable[[Mapping[str, object]], Refused | None]
"""What a tool's own checks return for well-typed arguments, or None (they pass)."""
Disagreement = Callable[[Mapping[str, object], object], str | None]
"""How a value the tool returned contradicts the call's arguments, or None."""
Appended = Callable[[Mapping[str, object], object, tuple[object, ...]], str | None]
"""How a value contradicts the schedule/change payloads appended between the call and its
result, or None (session-local tools append their own changes)."""


def _never(args: Mapping[str, object]) -> Refused | None:
    return None


def _agrees(args: Mapping[str, object], value: object) -> str | None:
    return None


def _appends_nothing_checked(args: Mapping[str, object], value: object, appended: tuple[object, ...]) -> str | None:
    return None


@dataclass(frozen=True)
class Tool:
    """One model-facing tool of a surface."""

    surface: str
    name: str
    params: ObjectShape
    """What the host validates before the body runs (a violation is a host failure)."""
    result: Spec
    """Every value the tool may return (its output schema)."""
    codes: tuple[str, ...]
    """The error codes its output schema declares."""
    refusal: Refusal = _never
    disagreement: Disagreement = _agrees
    appended: Appended = _appends_nothing_checked


def field(name: str, spec: Spec, meaning: str, optional: bool = False) -> Field:
    return Field(name, spec, "tool", meaning, optional)


MESSAGE = field("message", Text(), "A human-readable diagnostic.")


def error_shapes(prefix: str, codes: tuple[str, ...]) -> tuple[ObjectShape, ...]:
    """One closed `{code, message}` object per declared code (as the shipped output schemas
    declare them: one alternative per code)."""
    return tuple(
        ObjectShape(
            f"{prefix}-error-{code}",
            f"{code} error",
            f"The tool refused with {code}.",
            (field("code", Const(code), "The error code."), MESSAGE),
        )
        for code in codes
    )


def union(*options: Spec | ObjectShape) -> OneOf:
    """The alternatives a tool may return (object shapes nested by reference)."""
    return OneOf(tuple(Nested(o) if isinstance(o, ObjectShape) else o for o in options))


def array_of(shapes: tuple[ObjectShape, ...]) -> ArrayOf:
    return ArrayOf(union(*shapes))


def enum(*values: str) -> Enum:
    return Enum(values)


def title_refusal(title: object, limit: int) -> Refused | None:
    """A title must be non-empty after JavaScript trim() and at most `limit` UTF-16 code
    units long (trimmed): the shipped tools' check (`invalid_prompt`), which seed 002 states
    as its rule."""
    if type(title) is not str:
        return None
    if not js_trim(title):
        return "invalid_prompt", "the title is empty after trimming"
    if (units := js_length(js_trim(title))) > limit:
        return "invalid_prompt", f"the title is {units} UTF-16 code units long, over {limit}"
    return None


def blank(text: object) -> bool:
    """A string that is empty after JavaScript trim()."""
    return type(text) is str and not js_trim(text)


def untrimmed_id(value: object) -> bool:
    """An id that is empty or has surrounding (JavaScript) whitespace."""
    return type(value) is str and (not value or js_trim(value) != value)


def number_refusal(name: str, value: object, minimum: int, below: str) -> Refused | None:
    """`invalid_rule` for a number that is not a safe integer, `below` under `minimum`."""
    n = safe_integer(value)
    if n is None:
        return "invalid_rule", f"{name} {shown(value)} is not a safe integer"
    return (below, f"{name} {n} is below {minimum}") if n < minimum else None


def shapes_in(spec: Spec | ObjectShape) -> Iterator[ObjectShape]:
    """Every object shape a spec nests (each once, depth first): a schema's `$defs`."""
    seen: set[str] = set()

    def walk(s: object) -> Iterator[ObjectShape]:
        if isinstance(s, ObjectShape):
            if s.name in seen:
                return
            seen.add(s.name)
            yield s
            for f in s.fields:
                yield from walk(f.spec)
        elif isinstance(s, Nested):
            yield from walk(s.shape)
        elif isinstance(s, OneOf):
            for o in s.options:
                yield from walk(o)
        elif isinstance(s, ArrayOf):
            yield from walk(s.item)

    yield from walk(spec)


INTEGER = SafeInt(-MAX_SAFE_INTEGER)
"""An output schema's `integer` (the values a tool renders are safe)."""


def closed(name: str, title: str, meaning: str, *fields: tuple[str, Spec, str]) -> ObjectShape:
    """A closed object of tool fields, each given as (name, spec, meaning)."""
    return ObjectShape(name, title, meaning, tuple(field(n, s, m) for n, s, m in fields))


BLANK_PROMPT = ("invalid_prompt", "the prompt is empty after trimming")


def id_refusal(args: Mapping[str, object]) -> Refused | None:
    """An id must be non-empty with no surrounding whitespace (checked before anything else)."""
    if untrimmed_id(args.get("id")):
        return "invalid_rule", f"the id {shown(args.get('id'))} is empty or padded"
    return None


def echo(args: Mapping[str, object], value: object) -> str | None:
    """The value names the id the call gave."""
    if isinstance(value, dict) and "id" in value and "id" in args and value["id"] != args["id"]:
        return f"the value's id {value['id']!r} is not the id called with, {args['id']!r}"
    return None
