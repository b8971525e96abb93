"""Packed chunk rows (session-log.md §6): one storage record standing for n chunk events.

A row is validated exactly (a malformed row is a defect, like an unparsable line) and kept
packed; `events()` expands it to the `assistant/chunk` events it stands for, on demand.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from itertools import accumulate

from invariant.jsvalue import MAX_SAFE_INTEGER, safe_integer
from invariant.logshapes import ROW_SHAPE, TEXT_ROW_DATA, TOOL_ROW_DATA
from invariant.logshapes import ROW_TAGS as TAG_ORDER

ROW_TAGS = frozenset(TAG_ORDER)
_ENVELOPE = ROW_SHAPE.keys
_TEXT_KEYS = TEXT_ROW_DATA.keys
_TOOL_KEYS_NAMED = TOOL_ROW_DATA.keys
_TOOL_KEYS = frozenset(TOOL_ROW_DATA.required)
_DELTA = {"text-chunks": "text-delta", "reasoning-chunks": "reasoning-delta", "tool-call-chunks": "tool-call-delta"}


_STR = {str}
_INT = {int}
_NUMBER = {int, float}


def _times_surely_safe(time0: int, dt: list[int]) -> bool:
    """Cheap bound: every running sum stays safe when the extreme gaps, repeated, do."""
    n = len(dt)
    return time0 + n * min(0, min(dt)) >= -MAX_SAFE_INTEGER and time0 + n * max(0, max(dt)) <= MAX_SAFE_INTEGER


def _last_seq_safe(seq0: int, members: int) -> bool:
    """`seq0 + members - 1` is a safe integer as the session package computes it, in doubles
    from the left: 2^53 - 1 with two members passes (2^53 + 1 rounds to 2^53, less 1 is safe),
    with three it does not (2^53 + 2, less 1, rounds to 2^53)."""
    last = float(seq0 + members) - 1  # int to float rounds half to even, as a double sum does
    return last <= MAX_SAFE_INTEGER


class RowError(ValueError):
    """A record tagged as a chunk row does not have the exact row shape."""


@dataclass(frozen=True, slots=True)
class ChunkRow:
    tag: str
    seq0: int
    time0: int
    data: Mapping[str, object]
    members: list[str]
    dt: list[int]

    def __len__(self) -> int:
        return len(self.members)

    def to_json(self) -> dict[str, object]:
        """The row as a storage record."""
        return {"type": self.tag, "seq0": self.seq0, "time0": self.time0, "data": dict(self.data)}

    def events(self) -> Iterator[dict[str, object]]:
        """The expanded `assistant/chunk` events, in the reference's key order."""
        data = self.data
        delta = _DELTA[self.tag]
        times = accumulate(self.dt, initial=self.time0)
        for k, (member, time) in enumerate(zip(self.members, times, strict=False)):
            chunk: dict[str, object]
            if self.tag == "tool-call-chunks":
                chunk = {"type": delta, "index": data["index"], "id": data["id"]}
                if "name" in data:
                    chunk["name"] = data["name"]
                chunk["argumentsDelta"] = member
            else:
                chunk = {"type": delta, "index": data["index"], "text": member}
            yield {
                "type": "assistant/chunk",
                "seq": self.seq0 + k,
                "time": time,
                "data": {"turn": data["turn"], "step": data["step"], "chunk": chunk},
            }


def decode_row(value: Mapping[str, object], tag: str) -> ChunkRow:
    """Validate a record tagged `tag` as a packed row (§6.2); raise RowError."""
    if value.keys() != _ENVELOPE:
        raise RowError(f"{tag} row keys must be exactly type, seq0, time0, data")
    seq0 = safe_integer(value["seq0"])
    time0 = safe_integer(value["time0"])
    if seq0 is None or seq0 < 0:
        raise RowError(f"{tag} row seq0 is not a non-negative safe integer")
    if time0 is None:
        raise RowError(f"{tag} row time0 is not a safe integer")
    data = value["data"]
    if not isinstance(data, dict):
        raise RowError(f"{tag} row data is not an object")
    keys = data.keys()
    if tag == "tool-call-chunks":
        if keys != _TOOL_KEYS and keys != _TOOL_KEYS_NAMED:
            raise RowError("tool-call-chunks data keys must be turn, step, index, id, [name,] dt, args")
        if type(data["id"]) is not str or ("name" in data and type(data["name"]) is not str):
            raise RowError("tool-call-chunks id and name must be strings")
        members = data["args"]
    else:
        if keys != _TEXT_KEYS:
            raise RowError(f"{tag} data keys must be turn, step, index, dt, texts")
        members = data["texts"]
    if not {type(data["turn"]), type(data["step"]), type(data["index"])} <= _NUMBER:
        raise RowError(f"{tag} turn, step and index must be numbers")
    if type(members) is not list or not members or set(map(type, members)) != _STR:
        raise RowError(f"{tag} members must be a non-empty array of strings")
    dt = data["dt"]
    if type(dt) is not list or len(dt) != len(members) - 1:
        raise RowError(f"{tag} dt must be an array of {len(members) - 1 if isinstance(members, list) else '?'} gaps")
    if not set(map(type, dt)) <= _INT or (dt and not -MAX_SAFE_INTEGER <= min(dt) <= max(dt) <= MAX_SAFE_INTEGER):
        dt = [safe_integer(g) for g in dt]
        if None in dt:
            raise RowError(f"{tag} dt gaps must be safe integers")
    if not _last_seq_safe(seq0, len(members)):
        raise RowError(f"{tag} last member seq is not a safe integer")
    if dt and not _times_surely_safe(time0, dt):
        sums = list(accumulate(dt, initial=time0))
        if max(sums) > MAX_SAFE_INTEGER or min(sums) < -MAX_SAFE_INTEGER:
            raise RowError(f"{tag} member times leave the safe-integer range")
    return ChunkRow(tag, seq0, time0, data, members, dt)
