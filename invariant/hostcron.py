"""The Host schedule service's cron grammar (host.md §4), apart from the calendar profile's.

Five whitespace-separated fields (minute 0-59, hour 0-23, day-of-month 1-31, month 1-12,
day-of-week 0-7 with 7 for Sunday as 0); elements `*`, `n`, `a-b`, `*/n`, `a-b/n` in comma
lists; no names, macros, `L`, `W`, `#`, `?` or seconds. Inverted ranges, a step below 1 and
empty elements are refused (`invalid_rule`).

The Host stores an expression only in its canonical spelling (host.md §4.1) and refuses a
stored one that differs by a character: `canonical` computes it from the parsed value sets and
star flags, so a store can be judged exactly and a maintainer told what to write instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise

from .jsvalue import js_trim, shown

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


def _number(digits: str) -> int:
    """A decimal number as the Host reads it (leading zeros allowed); one of more than six
    significant digits is out of every range, read as such without converting it (a log may
    hold a number longer than the interpreter converts)."""
    significant = digits.lstrip("0")
    return int(significant or "0") if len(significant) <= 6 else 10**6


def _element(text: str, name: str, lo: int, hi: int) -> set[int]:
    match = _ELEMENT.fullmatch(text)
    if match is None:
        raise HostCronError(f"{name}: {shown(text)} is not *, n, a-b, */n or a-b/n")
    star, first, last, step_text = match.group(1) == "*", match.group(2), match.group(3), match.group(4)
    if not star and last is None and step_text is not None:
        raise HostCronError(f"{name}: a step needs * or a range ({shown(text)})")
    a, b = (lo, hi) if star else (_number(first), _number(last if last is not None else first))
    if not (lo <= a <= hi and lo <= b <= hi):
        raise HostCronError(f"{name}: {shown(text)} is outside {lo}-{hi}")
    if a > b:
        raise HostCronError(f"{name}: inverted range {shown(text)}")
    step = _number(step_text) if step_text is not None else 1
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


def _plain(values: list[int]) -> str:
    """A field whose text does not start with `*`, spelled from its sorted values: one value;
    an arithmetic run `first-last` or `first-last/d` (any two values are one); else the maximal
    runs of consecutive values, comma-joined."""
    if len(values) == 1:
        return str(values[0])
    gaps = {b - a for a, b in pairwise(values)}
    if len(gaps) == 1:
        (d,) = gaps
        return f"{values[0]}-{values[-1]}" + ("" if d == 1 else f"/{d}")
    runs: list[list[int]] = []
    for v in values:
        if runs and v == runs[-1][-1] + 1:
            runs[-1].append(v)
        else:
            runs.append([v])
    return ",".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)


def _starred(values: frozenset[int], lo: int, hi: int, day_of_week: bool) -> str:
    """A field whose text starts with `*`: `*` when every value of the range is present, else
    the star walk `*/k` holding the most values (all present; the smallest k wins a tie),
    then any remaining values spelled plainly."""
    if set(range(lo, 7 if day_of_week else hi + 1)) <= values:
        return "*"
    best: tuple[int, set[int]] | None = None
    for k in range(1, hi - lo + 2):
        walk = {v % 7 if day_of_week else v for v in range(lo, hi + 1, k)}
        if walk <= values and (best is None or len(walk) > len(best[1])):
            best = (k, walk)
    if best is None:
        raise HostCronError("no star walk fits: the field cannot keep its leading *")
    rest = sorted(values - best[1])
    return f"*/{best[0]}" + (f",{_plain(rest)}" if rest else "")


def canonical(cron: HostCron) -> str:
    """The one spelling the Host stores for this expression (host.md §4.1): each field spelled
    from its value set alone, by whether its text starts with `*`."""
    return " ".join(
        _starred(values, lo, hi, name == "day-of-week") if star else _plain(sorted(values))
        for values, star, (name, lo, hi) in zip(cron.values, cron.star, FIELDS, strict=True)
    )
