"""JSON of any depth: `deepjson.parse` accepts and gives what `json.loads` does; `dumps` round-trips."""

from __future__ import annotations

import json
import math
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay.lines import deepjson
from replay.lines.jsonline import JsonLineError, parse_header_line, parse_json_line

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=[]))
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=16,
)
_WHITESPACE = st.text(" \t\n\r", max_size=2)


def _reject(name: str) -> object:
    raise ValueError(name)


def _loads(text: str) -> object:
    return json.loads(text, parse_constant=_reject)


def _same(text: str) -> None:
    """Both parsers accept `text` with equal results, or both refuse it (alike)."""
    try:
        expected = _loads(text)
    except json.JSONDecodeError as err:  # the same message at the same place
        with pytest.raises(json.JSONDecodeError) as refused:
            deepjson.parse(text)
        assert (refused.value.msg, refused.value.pos) == (err.msg, err.pos)
        return
    except ValueError:  # NaN, Infinity: JavaScript has no such JSON
        with pytest.raises(ValueError):
            deepjson.parse(text)
        return
    assert deepjson.parse(text) == expected


@given(value=_VALUES, space=_WHITESPACE, indent=st.sampled_from([None, 0, 1]))
def test_parse_gives_what_json_loads_gives(value: object, space: str, indent: int | None) -> None:
    text = space + json.dumps(value, indent=indent, ensure_ascii=indent is None) + space
    _same(text)


@given(value=_VALUES, data=st.data())
def test_parse_refuses_what_json_loads_refuses(value: object, data: st.DataObject) -> None:
    """Random edits of a valid text: truncations, insertions, deletions."""
    text = json.dumps(value)
    at = data.draw(st.integers(0, len(text)))
    edit = data.draw(st.sampled_from(["cut", "insert", "delete"]))
    if edit == "cut":
        text = text[:at]
    elif edit == "insert":
        text = text[:at] + data.draw(st.sampled_from(list(',:[]{}"\\-.0e+ tfnx\x00\x1f'))) + text[at:]
    else:
        text = text[:at] + text[at + 1 :]
    _same(text)


@pytest.mark.parametrize(
    "text",
    [
        "", " ", "01", "1.", ".5", "-", "+1", "1e", "[1,]", '{"a":1,}', '{"a" 1}', "[1 2]", "NaN", "-Infinity",
        '"\\x"', '"a\nb"', "\ufeff1", "tru", "nulll", '{"a":1}x', "[]]", "{}}", '"\\ud800"', "-0", "1E+2",
        '{"a":1,"a":2,"b":3}', "  [ [ ] , { } ]  ", '"\\u00e9\\n"',
    ],
)  # fmt: skip
def test_parse_on_edge_cases(text: str) -> None:
    _same(text)


_OPENINGS = {"[": "]", '{"a":': "}", "[0,": "]", '{"k" : ': "}", "[ ": " ]", '{"a":1,"b":': "}"}


@given(
    value=_VALUES,
    cycle=st.lists(st.sampled_from(sorted(_OPENINGS)), min_size=1, max_size=4),
    depth=st.integers(1, 1500),
    data=st.data(),
)
def test_deep_texts_parse_and_fail_as_json_loads_does(
    value: object, cycle: list[str], depth: int, data: st.DataObject
) -> None:
    """Values under up to 1,500 containers (runs of openings and closings, of both kinds),
    whole or edited once, against `json.loads` allowed to recurse that deep."""
    opens = [cycle[n % len(cycle)] for n in range(depth)]
    text = "".join(opens) + json.dumps(value) + "".join(_OPENINGS[o] for o in reversed(opens))
    at = data.draw(st.integers(0, len(text)))
    edit = data.draw(st.sampled_from(["none", "cut", "insert", "delete"]))
    if edit == "cut":
        text = text[:at]
    elif edit == "insert":
        text = text[:at] + data.draw(st.sampled_from(list(',:[]{}" 1x'))) + text[at:]
    elif edit == "delete":
        text = text[:at] + text[at + 1 :]
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)
    try:
        _same(text)
    finally:
        sys.setrecursionlimit(limit)


def test_parse_has_no_depth_limit() -> None:
    depth = 200_000
    value = deepjson.parse("[" * depth + '{"k":[1,2]}' + "]" * depth)
    for _ in range(depth):
        assert isinstance(value, list) and len(value) == 1
        value = value[0]
    assert value == {"k": [1, 2]}


def test_deep_records_are_read_as_javascript_reads_them() -> None:
    """JSON.parse has no nesting limit (Node 20: a million levels); the reader falls back to
    `deepjson` where msgspec (about 1,000 levels) and the standard library stop."""
    deep = b'{"type":"x","seq":0,"data":' + b"[" * 5000 + b"]" * 5000 + b"}"
    value = parse_json_line(deep)
    assert isinstance(value, dict) and value["type"] == "x"
    header = parse_header_line(b'{"type":"session","x":' + b"[" * 5000 + b"-0" + b"]" * 5000 + b"}")
    assert isinstance(header, dict)
    inner = header["x"]
    while isinstance(inner, list):
        inner = inner[0]
    assert math.copysign(1, inner) == -1  # the header parser keeps -0 at any depth
    with pytest.raises(JsonLineError):
        parse_json_line(b"[" * 5000 + b"]" * 4999)


@given(value=_VALUES)
def test_dumps_round_trips_as_javascript_holds_values(value: object) -> None:
    text = deepjson.dumps(value)
    text.encode("utf-8")  # a lone surrogate became U+FFFD
    assert _loads(text) == _js(value)


def _js(value: object) -> object:
    """What JavaScript holds for a parsed value (the expectation, written out plainly)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        if abs(value) <= 2**53 - 1:
            return value
        try:
            return float(value)
        except OverflowError:
            return None
    if isinstance(value, str):
        return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    if isinstance(value, list):
        return [_js(v) for v in value]
    if isinstance(value, dict):
        return {_js(k): _js(v) for k, v in value.items()}
    return value


def test_dumps_writes_any_depth_and_odd_numbers() -> None:
    depth = 100_000
    value: object = [10**400, -(10**30), 2**53, -0.0, "\ud800x"]
    for _ in range(depth):
        value = [value]
    text = deepjson.dumps(value)
    assert text == "[" * depth + '[null,-1e+30,9007199254740992.0,-0.0,"\ufffdx"]' + "]" * depth


_HEADER_BYTES = st.one_of(
    st.sampled_from([b'{"a":-0}', b"[-0,1]", b'{"id":"real-00001","n":-0}', b"-0", b'{"x":-0e3}', b'"a-01"', b"-0.0"]),
    _VALUES.map(lambda v: json.dumps(v, ensure_ascii=False).encode("utf-8", "surrogatepass")),
    _VALUES.map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=40),
    st.builds(
        lambda a, b: a + b, _VALUES.map(lambda v: json.dumps(v).encode()), st.sampled_from([b"-0", b"-0.0", b" ", b"x"])
    ),
)


def _typed(value: object) -> object:
    """`value` with the type of every part: 1 and 1.0, -0.0 and NegativeZero told apart."""
    if isinstance(value, dict):
        return [(k, _typed(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, repr(value))


@settings(max_examples=600, deadline=None)
@given(raw=_HEADER_BYTES)
def test_a_short_header_read_by_msgspec_is_read_as_the_standard_library_reads_it(raw: bytes) -> None:
    """parse_header_line hands a short header with no `-0` to msgspec first: what it answers is
    what the standard library's reading (the one that keeps -0) answers, refusals included."""
    import replay.lines.jsonline as jsonline

    def read(fast: bool) -> object:
        saved = jsonline._SHORT_HEADER
        jsonline._SHORT_HEADER = saved if fast else -1
        try:
            value = parse_header_line(raw)
        except JsonLineError:
            return JsonLineError
        finally:
            jsonline._SHORT_HEADER = saved
        return _typed(value)

    assert read(True) == read(False)
