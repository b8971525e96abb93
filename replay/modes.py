"""The words a reading is chosen by on the command line: `auto` and the reader modes. They live
apart from `replay.reading` (which loads the profiles and the reading records) so that the
command line can offer them without loading what they choose (start-up, issue 65)."""

from __future__ import annotations

from enum import StrEnum

AUTO = "auto"
"""The profile name that asks for each session's own profile, as its evidence shows."""


class Mode(StrEnum):
    """Which of the reference's readers a log is held to (session-log.md §4)."""

    STRICT = "strict"
    """The persistence reader's rules: header shape and version, blank lines are defects."""
    LENIENT = "lenient"
    """The fixture reader's: header fields only read, blank lines skipped; seq contiguity still checked."""
