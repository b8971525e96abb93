"""Text for a terminal: what a log holds reaches a person's screen as data, never as control."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")
"""Characters a terminal acts on (ESC starts a sequence that can recolor, retitle or rewrite the
screen; CR and LF can forge a line; a tab breaks an aligned table), bidirectional overrides
(which show text reordered), what XML cannot hold, and lone surrogates, which have no UTF-8
form: one rule for every text output, as the README states."""


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # a byte a file name held that is no UTF-8 (Python's surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """One line of text for a person (or a JUnit file), every control character written as a
    visible escape: log content (ids, prompts, messages, file names) reaches the terminal as data."""
    return _CONTROL.sub(_escaped, text)
