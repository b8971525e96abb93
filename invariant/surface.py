"""The conversation surface a session log builds (session-log.md §5.1; the session package's
`foldSurface`): the seqs of its current nodes, in order. An append adds the event's seq; a
replace puts its own seq in place of the current nodes start..end, which must be current and in
order and each cited by the replacement, and a `tool/result` replacement takes the place of
exactly one current `tool/result`.

Not held here (noted in the closing note of the change): that every surface event carries a
`surfaceOp` (one without is read as an append: the fixtures and generators of this toolkit write
surface events without one, and every real log has one); that a `tool/result` replacement
changes only the result's content (the package compares the two events' data, which a reader
would have to keep for every result). The citation rules of each event alone are
`logshapes.surface_problems`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .jsvalue import safe_integer
from .logshapes import REPLACE_BOUNDS, SURFACE_TYPES, cited_seqs

TOOL_RESULT = "tool/result"


@dataclass
class Surface:
    """The current surface nodes, by seq, and which of them are tool results."""

    nodes: list[int] = field(default_factory=list)
    tool_results: set[int] = field(default_factory=set)

    def appended(self, seqs: Iterable[int], tool_results: Iterable[int] = ()) -> None:
        """Appends known to be well formed (the fast path's), in order."""
        self.nodes.extend(seqs)
        self.tool_results.update(tool_results)

    def step(self, event: Mapping[str, object], seq: int, version: int) -> list[tuple[str, str]]:
        """Apply one event whose envelope has its shape (each problem with its JSON pointer; an
        event with a problem changes nothing). Log-only events leave the surface alone."""
        tag = event.get("type")
        if tag not in SURFACE_TYPES:
            return []
        op = event.get("surfaceOp", "append")
        if not isinstance(op, Mapping):  # "append" (the shape allows nothing else), or none
            self.appended([seq], [seq] if tag == TOOL_RESULT else ())
            return []
        keys = REPLACE_BOUNDS[version]
        bounds = [safe_integer(op[key]) for key in keys]
        places = []
        for key, bound in zip(keys, bounds, strict=True):
            if bound not in self.nodes:  # a replacement is rare: two scans of the nodes are cheap
                return [(f"/surfaceOp/{key}", f"surface replace: {key} {bound} is not a current surface node")]
            places.append(self.nodes.index(bound))
        first, last = places
        if first > last:
            return [("/surfaceOp", f"surface replace: {keys[0]} {bounds[0]} comes after {keys[1]} {bounds[1]}")]
        shadowed = self.nodes[first : last + 1]
        cited = set(cited_seqs(event.get("sourceEventSeqs", [])) or ())
        missing = [n for n in shadowed if n not in cited]
        if missing:
            named = ", ".join(map(str, missing))
            return [
                ("/sourceEventSeqs", f"surface replace: sourceEventSeqs must cite every shadowed node; missing {named}")
            ]
        if tag == TOOL_RESULT and (len(shadowed) != 1 or shadowed[0] not in self.tool_results):
            return [("/surfaceOp", "a tool/result replacement must take the place of exactly one current tool/result")]
        self.nodes[first : last + 1] = [seq]
        self.tool_results.difference_update(shadowed)
        if tag == TOOL_RESULT:
            self.tool_results.add(seq)
        return []
