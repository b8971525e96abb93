"""JSON of any nesting depth: a parser and a writer that keep their own stack.

The reference parses records with `JSON.parse`, which has no nesting limit, while msgspec stops
near Python's recursion limit (reading and writing) and the standard library at it. These
are the fallbacks for the (rare) records nested deeper; they accept and give exactly what
`json.loads` does, and write what JavaScript holds.
"""

from __future__ import annotations

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


def parse(
    text: str,
    parse_int: Callable[[str], object] = int,
    parse_float: Callable[[str], object] = float,
) -> object:
    """`json.loads(text)` without recursion (`NaN` and `Infinity` are refused, as in JavaScript);
    raise JSONDecodeError."""
    stack: list[Container] = []
    keys: list[str] = []  # the pending key of each open object, in stack order
    pos = _skip_ws(text, 0)
    while True:
        c = text[pos : pos + 1]
        value: object
        if c == "{" or c == "[":
            pos = _skip_ws(text, pos + 1)
            if text[pos : pos + 1] == ("}" if c == "{" else "]"):
                value = {} if c == "{" else []
                pos += 1
            elif c == "{":
                stack.append({})
                key, pos = _key(text, pos)
                keys.append(key)
                continue
            else:
                stack.append([])
                continue
        elif c == '"':
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
        # a value is complete: place it, closing every container it completes
        while True:
            pos = _skip_ws(text, pos)
            if not stack:
                if pos != len(text):
                    raise _fail("Extra data", text, pos)
                return value
            top = stack[-1]
            if isinstance(top, list):
                top.append(value)
            else:
                top[keys[-1]] = value
            c = text[pos : pos + 1]
            if c == ",":
                pos = _skip_ws(text, pos + 1)
                if isinstance(top, dict):
                    keys[-1], pos = _key(text, pos)
                break
            if c != ("]" if isinstance(top, list) else "}"):
                raise _fail("Expecting ',' delimiter", text, pos)
            pos += 1
            value = stack.pop()
            if isinstance(value, dict):
                keys.pop()


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
    pending: list[Iterator[tuple[str, object]] | str] = [iter([("", value)])]
    while pending:
        top = pending[-1]
        if isinstance(top, str):  # a closing bracket, after its members
            out.append(top)
            pending.pop()
            continue
        member = next(top, None)
        if member is None:
            pending.pop()
            continue
        prefix, item = member
        out.append(prefix)
        if item is None:
            out.append("null")
        elif item is True or item is False:
            out.append("true" if item else "false")
        elif isinstance(item, str):
            out.append(string(item))
        elif isinstance(item, (int, float)):
            out.append(number(item))
        elif isinstance(item, dict):
            out.append("{")
            pending.append("}")
            pending.append(_members(item))
        elif isinstance(item, (list, tuple)):
            out.append("[")
            pending.append("]")
            pending.append(_members(item))
        else:
            raise TypeError(f"{type(item).__name__} is not JSON")
    return "".join(out)


def _js_string(text: str) -> str:
    return encode_basestring(js_well_formed(text))


def _exact_string(text: str) -> str:
    return encode_basestring_ascii(text)


def _exact_number(value: int | float) -> str:
    if type(value) is int or math.isfinite(value):
        return repr(int(value) if type(value) is int else float(value))
    return "1e400" if value > 0 else "-1e400"  # NaN is no JSON: parse never gives it


def _members(container: dict[object, object] | list[object] | tuple[object, ...]) -> Iterator[tuple[str, object]]:
    """A container's members, each with what precedes it (a comma, a key)."""
    if isinstance(container, dict):
        for n, (key, member) in enumerate(container.items()):
            yield f"{',' if n else ''}{encode_basestring(js_well_formed(str(key)))}:", member
    else:
        for n, member in enumerate(container):
            yield ("," if n else ""), member
