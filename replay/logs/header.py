"""A session log's first line: the header, what it says of the log, and what is wrong with it
(formats.md §1-§3, session-log.md §4.2).

The first line of a file is its session header, or an event (a headerless file of bare events,
the records stage reads it), or neither (no session log). A header names the format version the
rest of the log is read by; its fields are checked in the reference's order.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from invariant.filenames import file_version
from invariant.findings import Severity
from invariant.logshapes import CURRENT_FORMAT_VERSION, MARKER_CUT_FROM, format_version, header_problems
from invariant.shapes import pointer_to
from replay.lines.jsonline import Deep, JsonLineError, parse_header_line, parse_json_line
from replay.logs.frames import LONGEST_STRING, LongLine
from replay.logs.notes import Notes
from replay.sources.discover import generations_beside

_PLACEHOLDER = re.compile(r"\{\{[^{}]*\}\}")


@dataclass(frozen=True)
class Header:
    """What a log's first line says of it."""

    header: dict[str, object] | None = None
    headerless: bool = False
    """The first line is an event: the file holds bare events."""
    version: int | None = None
    """The format version the header gives (None: no header, or no readable version)."""
    unsupported: bool = False
    """The header names a format newer than this toolkit reads: the log cannot be judged."""
    size: int = 0
    """Bytes of a plain file's first line (its LF not counted)."""

    @property
    def session_id(self) -> str | None:
        value = None if self.header is None else self.header.get("id")
        return value if isinstance(value, str) else None

    @property
    def marks_cut(self) -> bool:
        """The fork cut is the last inherited marker (v2+), not a header seedLength (formats.md §5)."""
        return self.version is not None and MARKER_CUT_FROM <= self.version <= CURRENT_FORMAT_VERSION


def too_long(size: int) -> str:
    """Why a line of `size` bytes (its LF not counted) is no record: a LongLine."""
    return (
        f"{size:,} bytes long: longer than any record can be (it decodes to more than {LONGEST_STRING:,} UTF-16 "
        "code units, V8's longest string: JSON.stringify cannot write it, nor JSON.parse be given it); not read"
    )


def first_line(raw: bytes, path: str, on_disk: bool, deep: Deep, notes: Notes) -> Header:
    """The first line (with an LF after it) of the log at `path` (`on_disk`: read from there,
    its neighbours to be looked at): a header, checked; an event (headerless, for the records
    stage to read); or no session log (unreadable)."""
    value, refusal = _first_value(raw, notes.strict, deep)
    if refusal is not None:
        notes.cannot_read(refusal, 1)
        return Header()
    assert isinstance(value, dict)
    if value.get("type") != "session":
        notes.find("format.headerless", Severity.WARNING, "no session header: the file holds bare events", 1)
        return Header(headerless=True)
    version, unsupported = _check_header(value, path, on_disk, notes)
    return Header(value, False, version, unsupported)


def only_line(raw: bytes | LongLine, deep: Deep, notes: Notes) -> Header:
    """A file whose one line has no LF: a header (an empty log, refused), an event (torn), or
    no session log."""
    if isinstance(raw, LongLine):
        notes.cannot_read(f"not a session log: the only line (no LF) is {too_long(raw.size)}")
        return Header()
    try:
        value = parse_json_line(raw, deep)
    except JsonLineError:
        notes.cannot_read("not a session log: " + (compressed(raw) or "the only line is not JSON"))
        return Header()
    if isinstance(value, dict) and value.get("type") == "session":
        message = "the header line has no terminating LF (empty or header-less log)"
        notes.find("format.header", Severity.ERROR, message, 1)
        return Header(value)
    if isinstance(value, dict) and "type" in value:
        notes.torn(1, len(raw))
        return Header(headerless=True)
    notes.cannot_read("not a session log: the only line is neither a header nor an event")
    return Header()


COMPRESSORS = (
    (b"\x1f\x8b", "gzip", "gzip -dc"),
    (b"BZh", "bzip2", "bzip2 -dc"),
    (b"\xfd7zXZ\x00", "xz", "xz -dc"),
    (b"\x04\x22\x4d\x18", "LZ4", "lz4 -dc"),
    (b"PK\x03\x04", "a zip archive", "unzip -p"),
)
"""Other compressors' magic bytes, the name they go by, and the command that gives the text back."""


def compressed(first: bytes) -> str:
    """What compressed a file that starts with `first`, by its magic bytes, as a Zstandard file
    is named by its own ("": none of COMPRESSORS): no line of JSON starts so."""
    for magic, name, command in COMPRESSORS:
        if first.startswith(magic):
            return (
                f"{name} data (the harness writes plain JSONL or Zstandard frames): read its text with "
                f"`{command} FILE | schedlog verify -`"
            )
    return ""


def _first_value(first: bytes, strict: bool, deep: Deep) -> tuple[object, str | None]:
    """The first line's value, and why a file starting with it holds no session log (it is
    unreadable), or None when that line is a session header or an event (a headerless file)."""
    try:
        value = parse_header_line(first, deep)
    except JsonLineError as err:
        if not strict and not first.strip():
            return None, "not a session log: the first line is blank"
        return None, "not a session log: " + (compressed(first) or f"the first line is not JSON ({err})")
    if isinstance(value, dict) and isinstance(value.get("type"), str):
        return value, None
    return value, "not a session log: the first line is neither a session header nor an event"


def _check_header(h: dict[str, object], path: str, on_disk: bool, notes: Notes) -> tuple[int | None, bool]:
    """Version, header shape and retired fields, in the reference's order (formats.md §1, §3;
    session-log.md §4.2), and the version the file's name identifies (formats.md §2): the
    version, and whether it is newer than schedlog reads (then nothing more is checked)."""
    shape, retired, unsupported = header_problems(h)
    version = format_version(h)
    if unsupported:
        notes.find("format.version.newer", Severity.WARNING, f"{unsupported}: the log cannot be judged", 1, "/version")
        return version, True
    named = file_version(os.path.basename(path))
    if named is not None and on_disk:
        _note_generations(path, named, notes)
    if named is not None and version is not None and named != version:
        message = f"the file name identifies v{named}, but its header identifies v{version}"
        notes.find("format.name-version", Severity.ERROR, message, 1)
    if shape:
        notes.strict_problem("format.header", "not a session header: " + "; ".join(p for _, p in shape), 1, shape[0][0])
    if retired:
        message = f"session header uses retired policy baseline fields: {', '.join(retired)}"
        notes.strict_problem("format.header", message, 1, pointer_to(retired[0]))
    cwd = h.get("cwd")
    if isinstance(cwd, str):
        if _PLACEHOLDER.search(cwd):
            notes.find(
                "format.header.placeholder", Severity.WARNING, f"cwd {cwd!r} holds a fixture placeholder", 1, "/cwd"
            )
        elif not (cwd.startswith("/") or re.match(r"[A-Za-z]:[\\/]", cwd) or cwd.startswith("\\\\")):
            if version == CURRENT_FORMAT_VERSION:  # v4's own rule: an absolute cwd when present
                message = f"cwd {cwd!r} is not an absolute path (v4 headers require one)"
                notes.strict_problem("format.header", message, 1, "/cwd")
            else:
                notes.find("format.header.cwd", Severity.WARNING, f"cwd {cwd!r} is not an absolute path", 1, "/cwd")
    return version, False


def _note_generations(path: str, named: int, notes: Notes) -> None:
    """Other generations of the session beside the file (formats.md §2): the runtime loads the
    highest; migration leaves the older ones in place."""
    beside = generations_beside(path)
    if not beside:
        return
    newer = [n for n in beside if (file_version(n) or 0) > named]
    if newer:
        message = f"a newer generation is beside it ({newer[0]}): the runtime loads that one"
    else:
        message = f"older generations beside it: {', '.join(beside)}"
    notes.find("format.generations", Severity.INFO, message, None)
