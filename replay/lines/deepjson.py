"""JSON of any nesting depth: a parser and a writer that keep their own stack.

The reference parses records with `JSON.parse`, which has no nesting limit, while msgspec stops
near Python's recursion limit (reading and writing) and the standard library at it. These
are the fallbacks for the (rare) records nested deeper; they accept and give exactly what
`json.loads` does, and write what JavaScript holds.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from json import JSONDecodeError
from json.decoder import scanstring  # type: ignore[attr-defined]
from json.encoder import encode_basestring, encode_basestring_ascii

from invariant.jsvalue import MAX_SAFE_INTEGER, js_well_formed

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_LITERALS = (("true", True), ("false", False), ("null", None))

Container = list[object] | dict[str, object]


def _skip_ws(text: str, pos: int) -> int:
    """The position of the first non-whitespace character at or after `pos` (JSON whitespace)."""
    match = _WS.match(text, pos)
    assert match is not None  # the pattern matches the empty string anywhere
    return match.end()


def _fail(message: str, text: str, pos: int) -> JSONDecodeError:
    return JSONDecodeError(message, text, pos)


def _key(text: str, pos: int) -> tuple[str, int]:
    """An object key and its colon at `pos` (after whitespace); the position after the colon's whitespace."""
    if text[pos : pos + 1] != '"':
        raise _fail("Expecting property name enclosed in double quotes", text, pos)
    key, pos = scanstring(text, pos + 1, True)
    pos = _skip_ws(text, pos)
    if text[pos : pos + 1] != ":":
        raise _fail("Expecting ':' delimiter", text, pos)
    return key, _skip_ws(text, pos + 1)


_OPENS = re.compile(r"(?:\[[ \t\n\r]*)+")
"""A run of array openings (a deep array opens thousands at once)."""
_OPEN_KEY = re.compile(r'\{[ \t\n\r]*"([^"\\\x00-\x1f]*)"[ \t\n\r]*:[ \t\n\r]*')
_NEXT_KEY = re.compile(r',[ \t\n\r]*"([^"\\\x00-\x1f]*)"[ \t\n\r]*:[ \t\n\r]*')
"""An object's opening or a comma, with a key of no escape and its colon: the key as written
(what `scanstring` gives for it)."""


def _names_trailing_commas() -> bool:
    """Whether this Python's json.loads names a trailing comma (3.13 on: "Illegal trailing
    comma before end of array", at the comma), rather than expecting what follows it."""
    try:
        json.loads("[1,]")
    except JSONDecodeError as err:
        return err.msg.startswith("Illegal trailing comma")
    return False


_TRAILING_COMMAS = _names_trailing_commas()
_CLOSES = re.compile(r"(?:[\]}][ \t\n\r]*)+")
"""A run of closings."""


def parse(
    text: str,
    parse_int: Callable[[str], object] = int,
    parse_float: Callable[[str], object] = float,
) -> object:
    """`json.loads(text)` without recursion (`NaN` and `Infinity` are refused, as in JavaScript);
    raise JSONDecodeError with json.loads's message and position.

    A container joins its parent when it opens (members keep their order: nothing else joins
    the parent before it closes), so a closing only pops; runs of openings and of closings are
    matched at once."""
    if text.startswith("\ufeff"):
        raise _fail("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    stack: list[Container] = []
    root: list[object] = []
    key = ""  # the key of the value at `pos` when the innermost container is an object
    pos = _skip_ws(text, 0)
    while True:
        c = text[pos : pos + 1]
        value: object
        if c == "[":
            run = _OPENS.match(text, pos)
            assert run is not None
            opened: list[object] = []
            _place(stack, root, key, opened)
            count = run.group().count("[")
            for _ in range(count - 1):
                stack.append(opened)
                inner: list[object] = []
                opened.append(inner)
                opened = inner
            if text[run.end() : run.end() + 1] != "]":
                stack.append(opened)
                pos = run.end()
                continue
            pos = run.end() + 1  # the innermost one is [], a complete value
        elif c == "{":
            simple = _OPEN_KEY.match(text, pos)
            if simple is not None:
                members: dict[str, object] = {}
                _place(stack, root, key, members)
                stack.append(members)
                key, pos = simple.group(1), simple.end()
                continue
            pos = _skip_ws(text, pos + 1)
            members = {}
            _place(stack, root, key, members)
            if text[pos : pos + 1] == "}":
                pos += 1
            else:
                stack.append(members)
                key, pos = _key(text, pos)
                continue
        else:
            if c == '"':
                value, pos = scanstring(text, pos + 1, True)
            elif (number := _NUMBER.match(text, pos)) is not None:
                token = number.group()
                value = parse_float(token) if number.group(1) or number.group(2) else parse_int(token)
                pos = number.end()
            else:
                for word, literal in _LITERALS:
                    if text.startswith(word, pos):
                        value = literal
                        pos += len(word)
                        break
                else:
                    raise _fail("Expecting value", text, pos)
            _place(stack, root, key, value)
        # a value is complete: close every container it completes, up to the next member
        while True:
            pos = _skip_ws(text, pos)
            if not stack:
                if pos != len(text):
                    raise _fail("Extra data", text, pos)
                return root[0]
            c = text[pos : pos + 1]
            if c == ",":
                comma, pos = pos, _skip_ws(text, pos + 1)
                if type(stack[-1]) is list:
                    if _TRAILING_COMMAS and text[pos : pos + 1] == "]":
                        raise _fail("Illegal trailing comma before end of array", text, comma)
                elif (simple := _NEXT_KEY.match(text, comma)) is not None:
                    key, pos = simple.group(1), simple.end()
                elif _TRAILING_COMMAS and text[pos : pos + 1] == "}":
                    raise _fail("Illegal trailing comma before end of object", text, comma)
                else:
                    key, pos = _key(text, pos)
                break
            run = _CLOSES.match(text, pos)
            if run is None:
                raise _fail("Expecting ',' delimiter", text, pos)
            for at in range(pos, run.end()):
                closing = text[at]
                if closing != "]" and closing != "}":
                    continue
                if not stack:
                    raise _fail("Extra data", text, at)
                if closing != ("]" if type(stack[-1]) is list else "}"):
                    raise _fail("Expecting ',' delimiter", text, at)
                stack.pop()
            pos = run.end()


def _place(stack: list[Container], root: list[object], key: str, value: object) -> None:
    """Put `value` in the innermost open container (at `key` in an object), or make it the
    document's value."""
    if not stack:
        root.append(value)
    elif type(top := stack[-1]) is list:
        top.append(value)
    else:
        top[key] = value  # type: ignore[call-overload]


def _number(value: int | float) -> str:
    """A number as JavaScript holds it: a double (an integer beyond the safe range is rounded;
    Infinity, past the largest double, is written null as JSON.stringify writes it)."""
    if type(value) is int and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
        return str(value)
    try:
        as_double = float(value)
    except OverflowError:
        return "null"
    return repr(as_double) if math.isfinite(as_double) else "null"


def dumps(value: object, exact: bool = False) -> str:
    """Compact JSON of a parsed value as JavaScript holds it, without recursion: a lone
    surrogate becomes U+FFFD (the text must have a UTF-8 form), numbers are doubles.

    With `exact`, the text is what `parse` reads back to an equal value instead (integers of
    any size, lone surrogates as escapes, an infinite double as a number that overflows to it).
    """
    string, number = (_exact_string, _exact_number) if exact else (_js_string, _number)
    out: list[str] = []
    pending: list[Iterator[tuple[str, object]] | str] = []  # closings, and members still to write
    item = value
    while True:
        if isinstance(item, dict):
            if len(item) == 1:  # one member (a deep chain): no iterator
                ((key, item),) = item.items()
                out.append(f"{{{_key_text(key)}:")
                pending.append("}")
                continue
            out.append("{")
            pending.append("}")
            pending.append(_members(item))
        elif isinstance(item, (list, tuple)):
            if len(item) == 1:
                out.append("[")
                pending.append("]")
                item = item[0]
                continue
            out.append("[")
            pending.append("]")
            pending.append(_members(item))
        elif item is None:
            out.append("null")
        elif item is True or item is False:
            out.append("true" if item else "false")
        elif isinstance(item, str):
            out.append(string(item))
        elif isinstance(item, (int, float)):
            out.append(number(item))
        else:
            raise TypeError(f"{type(item).__name__} is not JSON")
        while pending:  # the next member, after the closings it follows
            top = pending.pop()
            if isinstance(top, str):
                out.append(top)
                continue
            member = next(top, None)
            if member is not None:
                pending.append(top)
                prefix, item = member
                out.append(prefix)
                break
        else:
            return "".join(out)


def _js_string(text: str) -> str:
    return encode_basestring(js_well_formed(text))


def _exact_string(text: str) -> str:
    return encode_basestring_ascii(text)


def _exact_number(value: int | float) -> str:
    if type(value) is int or math.isfinite(value):
        return repr(int(value) if type(value) is int else float(value))
    return "1e400" if value > 0 else "-1e400"  # NaN is no JSON: parse never gives it


def _key_text(key: object) -> str:
    return encode_basestring(js_well_formed(str(key)))


def _members(container: dict[object, object] | list[object] | tuple[object, ...]) -> Iterator[tuple[str, object]]:
    """A container's members, each with what precedes it (a comma, a key)."""
    if isinstance(container, dict):
        for n, (key, member) in enumerate(container.items()):
            yield f"{',' if n else ''}{_key_text(key)}:", member
    else:
        for n, member in enumerate(container):
            yield ("," if n else ""), member
