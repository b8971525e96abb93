"""JavaScript value semantics for parsed JSON.

The reference receives payloads from `JSON.parse`, so numbers are IEEE doubles compared by
value (`300.0` is the integer 300, booleans are never numbers) and "trimmed" means
ECMAScript `String.prototype.trim`. These helpers give Python exactly that view.
"""

from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from json.encoder import encode_basestring

MAX_SAFE_INTEGER = 2**53 - 1

#: ECMAScript WhiteSpace + LineTerminator: the set removed by `String.prototype.trim`.
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_JS_WHITESPACE_SET = frozenset(JS_WHITESPACE)
_ASCII_WHITESPACE_SET = frozenset("\t\n\v\f\r ")

_SURROGATE = re.compile("[\ud800-\udfff]")


class NegativeZero(float):
    """A parsed `-0` token: JavaScript keeps its sign, and some header fields refuse it."""


def is_number(value: object) -> bool:
    """True for a JSON number (Python int or float, a kept `-0` too), never for a boolean."""
    return type(value) is int or type(value) is float or type(value) is NegativeZero


def is_lossless(value: object) -> bool:
    """Whether every number anywhere in `value` survives a JSON round trip in JavaScript: finite
    and not negative zero (the reference's tool-argument validator refuses the others before any
    rule: `-0`, and `1e400`, which `JSON.parse` reads as Infinity). Walked without recursion."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, float) and (not math.isfinite(item) or (item == 0 and math.copysign(1.0, item) < 0)):
            return False
    return True


def safe_integer(value: object) -> int | None:
    """The value as an int when `Number.isSafeInteger` holds for it, else None.

    Integral floats count (JSON `30.0` is the number 30), and so does a kept `-0` (JavaScript's
    `Number.isSafeInteger(-0)` is true; the fields that refuse it say so); booleans do not.
    """
    if type(value) is int:
        return value if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER else None
    if (type(value) is float or type(value) is NegativeZero) and value.is_integer():
        return int(value) if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER else None
    return None


SHOWN_CHARACTERS = 60


def json_type(value: object) -> str:
    """The JSON name of a parsed value's type (what a message says, never Python's name)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object" if isinstance(value, dict) else type(value).__name__


def shown(value: object) -> str:
    """A value read from a log, as a message shows it: a scalar as Python writes it, an object
    or array by its JSON type only. Never recursive: a value may nest to any depth, and a
    message must not walk it (`repr` of 10,000 levels raises RecursionError). Long text is cut."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if type(value) is float and value in (math.inf, -math.inf):  # a number past the doubles, as JavaScript shows it
        return "Infinity" if value > 0 else "-Infinity"
    text = repr(value)
    return text if len(text) <= SHOWN_CHARACTERS else text[: SHOWN_CHARACTERS - 3] + "..."


ECHO_DEPTH = 16
ECHO_NODES = 1000


def echoed(value: object) -> object:
    """A value read from a log, as a report echoes it: itself while it nests at most ECHO_DEPTH
    levels, holds at most ECHO_NODES values and no number past the doubles, else by `shown` (a
    report must parse with any JSON reader: Python's `json.loads` stops at about 1,000 levels,
    and JSON has no Infinity, which `1e999` is to JavaScript). Found without recursion."""
    pending: list[tuple[object, int]] = [(value, 1)]
    nodes = 0
    while pending:
        item, depth = pending.pop()
        nodes += 1
        if nodes > ECHO_NODES or depth > ECHO_DEPTH:
            return f"{shown(value)} too large to echo"
        if type(item) is float and not math.isfinite(item):
            return shown(value) if item is value else f"{shown(value)} holding {shown(item)}"
        if isinstance(item, dict):
            pending += [(v, depth + 1) for v in item.values()]
        elif isinstance(item, list):
            pending += [(v, depth + 1) for v in item]
    return value


def json_equal(a: object, b: object) -> bool:
    """The session package's `isDeepEqualJson` over parsed JSON values: numbers by value (`1.0`
    is `1`), a boolean only equal to itself (not to 1), objects by their keys whatever the order.
    Without recursion (a value may nest past Python's stack)."""
    pending = [(a, b)]
    while pending:
        x, y = pending.pop()
        if isinstance(x, dict):
            if not isinstance(y, dict) or x.keys() != y.keys():
                return False
            pending += [(value, y[key]) for key, value in x.items()]
        elif isinstance(x, list):
            if not isinstance(y, list) or len(x) != len(y):
                return False
            pending += zip(x, y, strict=True)
        elif is_number(x):
            if not is_number(y) or x != y:
                return False
        elif type(x) is not type(y) or x != y:  # str, bool, None
            return False
    return True


def js_length(text: str) -> int:
    """JavaScript's `.length` of a string: UTF-16 code units (a character beyond U+FFFF is two)."""
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF) if not text.isascii() else len(text)


def number_equals(value: object, expected: int) -> bool:
    """JavaScript `value === expected` for a parsed JSON value and an integer."""
    return is_number(value) and value == expected


def js_trim(text: str) -> str:
    """`String.prototype.trim`: strip the ECMAScript whitespace set, nothing else."""
    return text.strip(JS_WHITESPACE)


def is_trimmed_nonempty(text: str) -> bool:
    """A non-empty string equal to its own JavaScript-trimmed form."""
    return text != "" and text[0] not in _JS_WHITESPACE_SET and text[-1] not in _JS_WHITESPACE_SET


def has_non_ascii_edge_whitespace(text: str) -> bool:
    """True when the string's untrimmed edge is Unicode-only whitespace (NBSP, BOM, ...).

    Used to name the finer rule: such characters are invisible in most editors.
    """
    if text == "":
        return False
    edges = (text[0], text[-1])
    return any(c in _JS_WHITESPACE_SET and c not in _ASCII_WHITESPACE_SET for c in edges)


def _escape_surrogates(text: str) -> str:
    """Render surrogates as `JSON.stringify` does: pairs literally, lone ones escaped."""
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        o = ord(c)
        if 0xD800 <= o <= 0xDBFF and i + 1 < n and 0xDC00 <= ord(text[i + 1]) <= 0xDFFF:
            low = ord(text[i + 1])
            out.append(chr(0x10000 + ((o - 0xD800) << 10) + (low - 0xDC00)))
            i += 2
            continue
        if 0xD800 <= o <= 0xDFFF:
            out.append(f"\\u{o:04x}")
        else:
            out.append(c)
        i += 1
    return "".join(out)


def js_well_formed(text: str) -> str:
    """`String.prototype.toWellFormed()`: each lone surrogate becomes U+FFFD, pairs are kept.

    The result has a UTF-8 form, so it fits where text must be valid Unicode (DuckDB, say).
    """
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


@lru_cache(maxsize=4096)
def js_string(text: str) -> str:
    """`JSON.stringify(text)` for a string: non-ASCII literal, lone surrogates as \\udxxx.

    `encode_basestring` is what `json.dumps(text, ensure_ascii=False)` calls, without building an
    encoder per call. Remembered: framing renders every batch member's id and prompt, the same
    ones batch after batch.
    """
    out: str = encode_basestring(text)
    return _escape_surrogates(out) if _SURROGATE.search(out) else out


def js_compact_json(value: object) -> str:
    """`JSON.stringify(value)` for JSON-shaped values of strings, ints, lists and dicts."""
    out = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return _escape_surrogates(out) if _SURROGATE.search(out) else out
