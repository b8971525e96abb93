"""Parse one JSONL record the way the reference's `JSON.parse` does.

msgspec is the fast path. Where it is stricter than JavaScript (invalid UTF-8, which the
reference replaces with U+FFFD; lone surrogate escapes, which JavaScript keeps; a number
beyond the doubles, which JavaScript reads as Infinity) the record is re-parsed with the
standard library, with `NaN`/`Infinity` refused as JavaScript refuses them,
and a record nested deeper than the standard library goes by `deepjson` (JSON.parse has no
nesting limit).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

import msgspec

from invariant.jsvalue import MAX_SAFE_INTEGER, NegativeZero
from replay.lines import deepjson

SafeInt = Annotated[int, msgspec.Meta(ge=-MAX_SAFE_INTEGER, le=MAX_SAFE_INTEGER)]
"""An integer JavaScript holds exactly, as a msgspec type (its decoder refuses any other)."""
Members = Annotated[list[str], msgspec.Meta(min_length=1)]
"""A packed chunk row's members (`texts`, `args`), as a msgspec type: at least one string."""

decode_json = msgspec.json.Decoder().decode
"""msgspec's reading of one JSON value (MsgspecError where it is stricter than JSON.parse)."""


class JsonLineError(ValueError):
    """The record is not one JSON value."""


class BeyondBound(Exception):
    """A deep value past the reader's budget (`Deep`): not read, and no judgement of the record
    (the reference reads it: it is schedlog's bound, never a defect of the log). `line` is the
    record's where whoever read it knew it (the finding is located there, however the log was
    read: cold or resumed, block by block)."""

    def __init__(self, line: int | None = None) -> None:
        super().__init__(line)
        self.line = line


def located(bound: BeyondBound, line: int) -> BeyondBound:
    """`bound`, located at `line` unless a reader nearer the record located it first."""
    if bound.line is None:
        bound.line = line
    return bound


Deep = Callable[[int], None]
"""Hears the length of each value read without recursion (nested deeper than the standard
library goes) before it is read, and raises BeyondBound to refuse it: a pure-Python parse costs
a hundred times a C one, so a log's reader bounds what it spends on them."""


DEEP_BUDGET = 1 << 20
"""The most characters of values nested deeper than the standard library reads (about 1,000
levels; `JSON.parse` has no limit) that one log's reading parses, at a hundred times the cost
of the others: harness logs hold none, and a crafted one (64 MiB of brackets in a 1 MB zstd
file) would cost minutes and gigabytes. Past it: `format.depth.bound`, the log not read on."""
DEPTH_BOUND_MESSAGE = (
    f"schedlog reads at most {DEEP_BUDGET:,} characters of values nested deeper than about 1,000 levels "
    "in one log (its bound, not a defect of the log): not read further"
)


@dataclass
class DeepBudget:
    """One log's DEEP_BUDGET, a `Deep`: what is left of it, charged value by value."""

    left: int = DEEP_BUDGET

    def __call__(self, length: int) -> None:
        self.left -= length
        if self.left < 0:
            raise BeyondBound


def _no_constants(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def parse_json_line(raw: bytes, deep: Deep | None = None) -> object:
    """The JSON value of one record's bytes, or JsonLineError (`deep`: see Deep)."""
    try:
        return decode_json(raw)
    except (msgspec.MsgspecError, RecursionError):
        pass
    return _parse_text(raw.decode("utf-8", "replace"), deep)


def js_int(token: str) -> int | float:
    """An integer token as `JSON.parse` reads it: a number. Python keeps it exact, but refuses
    one longer than its digit limit (4,300 by default, `sys.set_int_max_str_digits`), which
    JavaScript reads as the nearest double (Infinity past 1.8e308): then the double, as `float`
    makes it (with no digit limit), so no log's numbers can make a line unreadable."""
    try:
        return int(token)
    except ValueError:
        return float(token)


def _parse_text(text: str, deep: Deep | None = None) -> object:
    """The standard library's reading, `NaN`/`Infinity` refused, unbounded nesting allowed."""
    try:
        try:
            return _TEXT_DECODER.decode(text)
        except RecursionError:  # nested deeper than Python's recursion limit, which JSON.parse is not
            if deep is not None:
                deep(len(text))
            return deepjson.parse(text, parse_int=js_int)
    except ValueError as err:
        raise JsonLineError(str(err).split(": line")[0]) from None


def parse_json_text(text: str, deep: Deep | None = None) -> object:
    """`JSON.parse` of a JavaScript string (a tool call's arguments, a result's text), or
    JsonLineError: a string holding a lone surrogate (JavaScript keeps them) has no UTF-8 form
    and is read as text."""
    try:
        raw = text.encode()
    except UnicodeEncodeError:
        return _parse_text(text, deep)
    return parse_json_line(raw, deep)


def _parse_int(token: str) -> int | float:
    return NegativeZero(-0.0) if token == "-0" else js_int(token)


def _parse_float(token: str) -> float:
    value = float(token)
    return NegativeZero(-0.0) if value == 0 and token.startswith("-") else value


_TEXT_DECODER = json.JSONDecoder(parse_constant=_no_constants, parse_int=js_int)
_HEADER_DECODER = json.JSONDecoder(parse_constant=_no_constants, parse_int=_parse_int, parse_float=_parse_float)
"""Made once: `json.loads` with hooks builds a decoder on every call (a header per session)."""


_SHORT_HEADER = 4096
"""A header line this short holds no integer longer than Python's digit limit (`js_int`)."""
_BOM = "\ufeff".encode()
_MINUS_ZERO = re.compile(rb"-0(?![0-9])")
"""Where a negative zero may be written (`-0`, `-0.0`, `-0e1`; `-05` is no JSON number, so a
`-0` before a digit is inside a string, as in a session id `real-00001`)."""


def parse_header_line(raw: bytes, deep: Deep | None = None) -> object:
    """Like `parse_json_line`, but keeps the sign of negative zero (header checks and conformance
    requests need it: JavaScript reads `-0` as negative zero)."""
    if len(raw) <= _SHORT_HEADER and not raw.startswith(_BOM) and _MINUS_ZERO.search(raw) is None:
        try:  # no negative zero to keep, no number past the digit limit: msgspec reads it alike
            return decode_json(raw)
        except (msgspec.MsgspecError, RecursionError):
            pass
    text = raw.decode("utf-8", "replace")
    if text.startswith("\ufeff"):  # json.loads's own refusal, which the decoder does not make
        raise JsonLineError("Unexpected UTF-8 BOM (decode using utf-8-sig)")
    try:
        try:
            return _HEADER_DECODER.decode(text)
        except RecursionError:
            if deep is not None:
                deep(len(text))
            return deepjson.parse(text, parse_int=_parse_int, parse_float=_parse_float)
    except ValueError as err:
        raise JsonLineError(str(err).split(": line")[0]) from None


def data_of_line(line: bytes) -> object:
    """The `data` of the event on `line` (a surface's kept tool result, invariant.surface)."""
    value = parse_json_line(line)
    return value.get("data") if isinstance(value, dict) else None
