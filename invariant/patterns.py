"""Regular expressions that mean the same in ECMAScript (ajv, `u` flag) and Python `re`.

They render the string rules of the protocol into JSON Schema `pattern`s. Two portability
traps are avoided: Python's `$` also matches before a final newline, so the end of the string
is written `(?![\\s\\S])`; and only ASCII digits are written (`[0-9]`, never `\\d`).
"""

from __future__ import annotations

END = r"(?![\s\S])"
"""End of string in both engines."""

JS_WHITESPACE_CLASS = r"\t\n\u000b\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
"""The characters JavaScript's trim() removes, as a character-class body."""

TRIMMED = rf"^(?![{JS_WHITESPACE_CLASS}])(?![\s\S]*[{JS_WHITESPACE_CLASS}]$)"
"""No JavaScript whitespace at either end (the `$` inside the lookahead is safe in both
engines: where Python's differs, the final character is a newline, which is whitespace)."""

_YEAR = "(?!0000)[0-9]{4}"
_MONTH_DAY = (
    "(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
    "|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
    "|02-(?:0[1-9]|1[0-9]|2[0-8]))"
)
_LEAP_YEAR = "(?!0000)(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)"
DATE = f"(?:{_YEAR}-{_MONTH_DAY}|{_LEAP_YEAR}-02-29)"
"""A real proleptic Gregorian date of years 0001-9999 (leap years included)."""

_HOUR_MINUTE = "(?:[01][0-9]|2[0-3]):[0-5][0-9]"
INSTANT = rf"^{DATE}T{_HOUR_MINUTE}:[0-5][0-9]\.[0-9]{{3}}Z{END}"
WHOLE_MINUTE_INSTANT = rf"^{DATE}T{_HOUR_MINUTE}:00\.000Z{END}"

ZONE = rf"^(?:UTC|[A-Za-z][A-Za-z0-9_+.-]*(?:/[A-Za-z0-9_+.-]+)+){END}"


def _field(number: str, step: str, step_above_one: str) -> str:
    return (
        rf"(?:\*|\*/{step_above_one}|{number}-{number}/{step}|{number}-{number}"
        rf"|{number}(?:,{number})+|{number})"
    )


def _at_most(n: int) -> str:
    """Canonical decimal numbers 0..n (n <= 99, no leading zeros)."""
    if n < 10:
        return f"[0-{n}]"
    tens, ones = divmod(n, 10)
    parts = ["[0-9]"] + ([f"[1-{tens - 1}][0-9]"] if tens > 1 else []) + [f"{tens}[0-{ones}]"]
    return "(?:" + "|".join(parts) + ")"


_DESCENDING = "|".join(f"{x}[,-]{_at_most(x)}" for x in range(60))
_ORDERED = rf"(?!(?:[\s\S]*[ ,])?(?:{_DESCENDING})(?:[ ,/]|{END}))"
"""No list item or range bound is followed by one that is not larger (`5-1`, `30,0`, `2,2`)."""
_ONE_SUNDAY = rf"(?!(?:0(?:,[1-6])*,7|0-7(?:/[17])?){END})"
"""Day-of-week names Sunday (0 and 7) at most once: not `0,...,7`, `0-7`, `0-7/1`, `0-7/7`."""

_MINUTE = _field("(?:[0-9]|[1-5][0-9])", "(?:[1-9]|[1-5][0-9]|60)", "(?:[2-9]|[1-5][0-9]|60)")
_HOUR = _field("(?:[0-9]|1[0-9]|2[0-3])", "(?:[1-9]|1[0-9]|2[0-4])", "(?:[2-9]|1[0-9]|2[0-4])")
_DAY = _field("(?:[1-9]|[12][0-9]|3[01])", "(?:[1-9]|[12][0-9]|3[01])", "(?:[2-9]|[12][0-9]|3[01])")
_MONTH = _field("(?:[1-9]|1[0-2])", "(?:[1-9]|1[0-2])", "(?:[2-9]|1[0-2])")
_WEEKDAY = _field("[0-7]", "[1-7]", "[2-7]")
CANONICAL_CRON = rf"^{_ORDERED}{_MINUTE} {_HOUR} (?:\* {_MONTH} {_ONE_SUNDAY}{_WEEKDAY}|{_DAY} {_MONTH} \*){END}"
"""Canonical restricted cron text: every grammar rule of protocol.md §2.6 (values are bounded,
so even increasing lists and ranges are a regular language)."""
