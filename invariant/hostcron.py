"""The Host schedule service's cron grammar (host.md §4), apart from the calendar profile's.

Five whitespace-separated fields (minute 0-59, hour 0-23, day-of-month 1-31, month 1-12,
day-of-week 0-7 with 7 for Sunday as 0); elements `*`, `n`, `a-b`, `*/n`, `a-b/n` in comma
lists; no names, macros, `L`, `W`, `#`, `?` or seconds. Inverted ranges, a step below 1 and
empty elements are refused (`invalid_rule`).

The Host stores expressions in a canonical form and refuses a stored one that is not. Its
exact algorithm (how runs merge, when a uniform step is written `a-b/n`) is not in the spec,
so `spelling_problems` names only what no canonical form can hold (choice, documented: a
store is never called corrupt on a guess): a leading zero, `7` for Sunday, a step of 1, a
range `a-a`, list items out of ascending order or repeated, and whitespace other than single
spaces between the fields.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise

from .jsvalue import js_trim

FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day-of-month", 1, 31), ("month", 1, 12), ("day-of-week", 0, 7))
"""Each field's name and value range (day-of-week 7 is Sunday, read as 0)."""
_ELEMENT = re.compile(r"(\*|([0-9]+)(?:-([0-9]+))?)(?:/([0-9]+))?")
_JS_SPACE = re.compile(r"[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+")
"""JavaScript's `\\s` (what `split(/\\s+/)` splits on)."""


class HostCronError(ValueError):
    """The expression is not in the Host grammar (`invalid_rule`)."""


@dataclass(frozen=True)
class HostCron:
    """A parsed expression: each field's values, and whether its text starts with `*`
    (Vixie day matching: both day fields must match when either is star-led)."""

    text: str
    values: tuple[frozenset[int], ...]
    star: tuple[bool, ...]


def _element(text: str, name: str, lo: int, hi: int) -> set[int]:
    match = _ELEMENT.fullmatch(text)
    if match is None:
        raise HostCronError(f"{name}: {text!r} is not *, n, a-b, */n or a-b/n")
    star, first, last, step_text = match.group(1) == "*", match.group(2), match.group(3), match.group(4)
    if not star and last is None and step_text is not None:
        raise HostCronError(f"{name}: a step needs * or a range ({text!r})")
    a, b = (lo, hi) if star else (int(first), int(last if last is not None else first))
    if not (lo <= a <= hi and lo <= b <= hi):
        raise HostCronError(f"{name}: {text!r} is outside {lo}-{hi}")
    if a > b:
        raise HostCronError(f"{name}: inverted range {text!r}")
    step = int(step_text) if step_text is not None else 1
    if step < 1:
        raise HostCronError(f"{name}: step {step} is below 1")
    return set(range(a, b + 1, step))


def parse_host_cron(text: object) -> HostCron:
    """The expression parsed; HostCronError for anything outside the grammar."""
    if type(text) is not str:
        raise HostCronError("the expression must be a string")
    fields = [f for f in _JS_SPACE.split(js_trim(text)) if f]
    if len(fields) != 5:
        raise HostCronError(f"exactly five fields are needed, got {len(fields)}")
    values, star = [], []
    for field, (name, lo, hi) in zip(fields, FIELDS, strict=True):
        found: set[int] = set()
        for element in field.split(","):
            found |= _element(element, name, lo, hi)
        if name == "day-of-week" and 7 in found:
            found = (found - {7}) | {0}
        values.append(frozenset(found))
        star.append(field.startswith("*"))
    return HostCron(text, tuple(values), tuple(star))


def spelling_problems(text: str) -> list[str]:
    """What keeps a grammatical expression from being any canonical spelling (see the module)."""
    problems = []
    if text != " ".join(f for f in _JS_SPACE.split(text) if f):
        problems.append("fields are not separated by single spaces")
    for field, (name, _, _) in zip(text.split(" "), FIELDS, strict=False):
        starts: list[int] = []
        for element in field.split(","):
            match = _ELEMENT.fullmatch(element)
            if match is None:
                continue
            numbers = [g for g in (match.group(2), match.group(3), match.group(4)) if g is not None]
            if any(len(n) > 1 and n.startswith("0") for n in numbers):
                problems.append(f"{name}: {element!r} has a leading zero")
            if name == "day-of-week" and any(int(n) == 7 for n in (match.group(2), match.group(3)) if n is not None):
                problems.append(f"{name}: Sunday is written 0, not 7")
            if match.group(4) is not None and int(match.group(4)) == 1:
                problems.append(f"{name}: {element!r} has a step of 1")
            if match.group(3) is not None and int(match.group(2)) == int(match.group(3)):
                problems.append(f"{name}: {element!r} is a range of one value")
            if match.group(2) is not None:
                starts.append(int(match.group(2)))
        if any(b <= a for a, b in pairwise(starts)):
            problems.append(f"{name}: list items are not in ascending order without repeats")
    return problems
