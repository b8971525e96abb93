"""The conversation surface a session log builds (session-log.md §5.1; the session package's
`foldSurface`): the seqs of its current nodes, in order. An append adds the event's seq; a
replace puts its own seq in place of the current nodes start..end, which must be current and in
order and each cited by the replacement, and a `tool/result` replacement takes the place of
exactly one current `tool/result` and changes only its result's content (`assertToolResultRewrite`).

To compare a result with its replacement, the surface keeps, for each current result, its data
without the result's content, or the bytes of its line to parse it from (`parse`, the reader's
JSON.parse, given to it), so a log's results are never all held, and a surface is plain data (a
reader's saved state holds it). The citation rules of each event alone are
`logshapes.surface_problems`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from .jsvalue import json_equal, safe_integer
from .logshapes import REPLACE_BOUNDS, SURFACE_TYPES, cited_runs, covered, covers, missing_surface_op
from .sessionload import LEGACY_RESULT_KEYS, legacy_result_message

TOOL_RESULT = "tool/result"


RestOf = object
"""What the surface keeps of a current tool result, to compare it with a replacement that names
it: the bytes of its line (the event's data parsed from them when asked), or its data itself
with its result's content left out (the comparison leaves it out)."""


def _unparsed(line: bytes) -> object:
    raise ValueError("this surface was given lines with no parse to read them")


def result_rest(data: object, legacy_id: object) -> object:
    """What a `tool/result` replacement must leave as it was (the package's
    `assertToolResultRewrite`): the event's data as the load upgrades it (a legacy flat result,
    session-log.md §12, gets a message of id `legacy_id`), with its result block's content null.
    None for data the load checks refuse (they say why)."""
    if not isinstance(data, dict):
        return None
    if "message" not in data and data.keys() >= LEGACY_RESULT_KEYS:
        kept = {k: v for k, v in data.items() if k not in LEGACY_RESULT_KEYS}
        data = {**kept, "message": legacy_result_message(data, legacy_id)}
    message = data.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list) or len(content) != 1 or not isinstance(content[0], dict):
        return None
    return {**data, "message": {**message, "content": [{**content[0], "content": None}]}}  # type: ignore[dict-item]


def _message_id(rest: object) -> object:
    message = rest.get("message") if isinstance(rest, dict) else None
    return message.get("id") if isinstance(message, dict) else None


@dataclass
class Surface:
    """The current surface nodes, by seq, and for those that are tool results how to get their
    data back. `session_id` names the legacy message ids the load gives pre-identity results."""

    nodes: list[int] = field(default_factory=list)
    tool_results: dict[int, RestOf] = field(default_factory=dict)
    session_id: str = ""
    parse: Callable[[bytes], object] = _unparsed
    """The event's data from a kept line's bytes (a module's function: the surface pickles)."""

    def appended(self, seqs: Iterable[int], tool_results: Iterable[tuple[int, RestOf]] = ()) -> None:
        """Appends known to be well formed (the fast path's), in order, with each tool result's
        seq and data getter."""
        self.nodes.extend(seqs)
        self.tool_results.update(tool_results)

    def _legacy_id(self, seq: int) -> str:
        """The id the load gives the message of a legacy event at `seq` (session-log.md §12)."""
        return f"legacy-message:{self.session_id}:{seq}"

    def _rest(self, seq: int) -> object:
        """The rest of the current tool result at `seq` (upgraded as the load does: a getter
        that hands back the whole data of a legacy result upgrades it with its seq's id)."""
        kept = self.tool_results[seq]
        return result_rest(self.parse(kept) if type(kept) is bytes else kept, self._legacy_id(seq))

    def step(self, event: Mapping[str, object], seq: int, version: int) -> list[tuple[str, str]]:
        """Apply one event whose envelope has its shape (each problem with its JSON pointer; an
        event with a problem changes nothing). Log-only events leave the surface alone."""
        tag = event.get("type")
        if tag not in SURFACE_TYPES:
            return []
        op = event.get("surfaceOp")
        if op is None:  # logshapes.surface_problems says so first, in the reader
            return [missing_surface_op(tag)]
        if not isinstance(op, Mapping):  # "append" (the shape allows nothing else)
            self.appended([seq], self._kept(event, seq, tag, self._legacy_id(seq)))
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
        cited = covered(cited_runs(event.get("sourceEventSeqs", [])) or [])
        missing = [n for n in shadowed if not covers(cited, n)]
        if missing:
            named = ", ".join(map(str, missing))
            return [
                ("/sourceEventSeqs", f"surface replace: sourceEventSeqs must cite every shadowed node; missing {named}")
            ]
        legacy_id: object = None
        if tag == TOOL_RESULT:
            if len(shadowed) != 1 or shadowed[0] not in self.tool_results:
                message = "a tool/result replacement must take the place of exactly one current tool/result"
                return [("/surfaceOp", message)]
            original = self._rest(shadowed[0])
            legacy_id = _message_id(original)  # a legacy replacement inherits the id it replaces
            rest = result_rest(event.get("data"), legacy_id)
            if original is not None and rest is not None and not json_equal(original, rest):
                return [("/data", "a tool/result replacement may change only its result's content")]
        self.nodes[first : last + 1] = [seq]
        for node in shadowed:
            self.tool_results.pop(node, None)
        self.tool_results.update(self._kept(event, seq, tag, legacy_id))
        return []

    @staticmethod
    def _kept(event: Mapping[str, object], seq: int, tag: object, legacy_id: object) -> list[tuple[int, RestOf]]:
        """A tool result's seq and its rest (computed now: the event is at hand)."""
        if tag != TOOL_RESULT:
            return []
        return [(seq, result_rest(event.get("data"), legacy_id))]
