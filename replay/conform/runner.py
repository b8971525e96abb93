"""Put the cases to an implementation, compare each answer with schedlog's, shrink what differs.

A disagreement is shrunk greedily: drop an event (renumbering the rest and the seedLength and
dispatchSeq that point past it), an array element, an object key, half a string; a smaller
request is kept only while both sides still give the answers they gave (same `ok` and `code`
each) and still disagree, so the reported counterexample shows the original divergence.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from invariant.conformance import Answer, agree
from replay.conform.cases import Case, Request, get_at, paths, replace_at
from replay.conform.transport import Implementation, ProtocolError, request_line, safe_answer
from replay.lines.jsonline import parse_header_line

SHRINK_BUDGET = 400
"""Requests one shrink may try: enough for logs of dozens of events, bounded for slow hosts."""
SHOWN_PER_OP = 5
"""Disagreements shrunk and reported per operation (the rest are counted)."""


@dataclass(frozen=True)
class Disagreement(Case):
    """A request the two implementations answer differently (after shrinking)."""

    expected: Answer
    actual: Answer
    original_size: int
    """The length of the request line before shrinking."""


@dataclass(frozen=True)
class ProtocolFailure(Case):
    """The request during which the implementation broke the protocol, and how."""

    detail: str


@dataclass
class Outcome:
    """What a conformance run found."""

    command: str
    asked: Counter[str] = field(default_factory=Counter)
    differing: Counter[str] = field(default_factory=Counter)
    disagreements: list[Disagreement] = field(default_factory=list)
    """The first of each operation, shrunk; each shrunk request once (several cases often
    shrink to one)."""
    shrunk: Counter[str] = field(default_factory=Counter)
    failure: ProtocolFailure | None = None
    seconds: float = 0.0

    @property
    def status(self) -> int:
        """2 a protocol error, 1 any disagreement, 0 full agreement."""
        return 2 if self.failure is not None else 1 if self.differing else 0


SHRUNK_PER_SHOWN = 3
"""Cases shrunk per disagreement shown at most: those that shrink to one already shown are
tried again with the next, up to this many each."""


def _expected(request: Request) -> Answer:
    """schedlog's answer to the request as the wire carries it (read back as JSON.parse would)."""
    return safe_answer(parse_header_line(request_line(request).encode("ascii")))


def _kind(value: Answer) -> tuple[object, object]:
    return value.get("ok"), value.get("code")


def _without(items: list[Any], i: int, events: bool) -> list[Any]:
    out = items[:i] + items[i + 1 :]
    if events:
        out = [dict(e, seq=n) if isinstance(e, dict) and "seq" in e else e for n, e in enumerate(out)]
    return out


def _shifted(request: Request, i: int) -> Request | None:
    """The request's seedLength and dispatchSeq moved for event `i` gone (None: it was the target)."""
    out = dict(request)
    for key in ("seedLength", "dispatchSeq"):
        value = out.get(key)
        if type(value) is int and value > i:
            out[key] = value - 1
        elif key == "dispatchSeq" and value == i:
            return None
    return out


KEPT = ("op", "profile")
"""Top-level keys a shrink keeps whole: the operation, and the profile a disagreement is of."""


def smaller(request: Request) -> Iterator[Request]:
    """Every request one step smaller than `request`, biggest steps first (its `op` and
    `profile` kept)."""
    for path in paths(request):
        node = get_at(request, path)
        if isinstance(node, list):
            events = path == ("events",)
            for i in range(len(node)):
                base = _shifted(request, i) if events else request
                if base is not None:
                    yield replace_at(base, path, _without(node, i, events))
        elif isinstance(node, dict):
            for key in node:
                if path or key not in KEPT:
                    yield replace_at(request, path, {k: v for k, v in node.items() if k != key})
        elif isinstance(node, str) and len(node) > 1 and path not in (("op",), ("profile",)):
            yield replace_at(request, path, node[: len(node) // 2])
            yield replace_at(request, path, node[len(node) // 2 :])


def shrink(request: Request, fails: Callable[[Request], bool], budget: int = SHRINK_BUDGET) -> Request:
    """The smallest request reached by one-step reductions that keep `fails` true."""
    current, tries = request, 0
    progress = True
    while progress and tries < budget:
        progress = False
        for candidate in smaller(current):
            tries += 1
            if fails(candidate):
                current, progress = candidate, True
                break
            if tries >= budget:
                break
    return current


def run(implementation: Implementation, cases: Sequence[Case], shown_per_op: int = SHOWN_PER_OP) -> Outcome:
    """Ask every case; shrink and keep the first disagreements of each operation."""
    outcome = Outcome(implementation.command)
    started = time.perf_counter()
    current: Case | None = None
    answers = implementation.answers(case.request for case in cases)
    try:
        for case in cases:
            current = case
            expected = _expected(case.request)  # judged while the implementation answers
            actual = next(answers)
            outcome.asked[case.op] += 1
            if agree(expected, actual):
                continue
            outcome.differing[case.op] += 1
            shown = [d for d in outcome.disagreements if d.op == case.op]
            if len(shown) < shown_per_op and outcome.shrunk[case.op] < SHRUNK_PER_SHOWN * shown_per_op:
                outcome.shrunk[case.op] += 1
                found = _shrunk(implementation, case, expected, actual)
                if all(d.request != found.request for d in shown):
                    outcome.disagreements.append(found)
    except ProtocolError as err:
        assert current is not None
        outcome.failure = ProtocolFailure(current.name, current.request, str(err))
    outcome.seconds = time.perf_counter() - started
    return outcome


def _shrunk(implementation: Implementation, case: Case, expected: Answer, actual: Answer) -> Disagreement:
    pair = (_kind(expected), _kind(actual))

    def fails(request: Request) -> bool:
        theirs, ours = implementation.ask(request), _expected(request)
        return (_kind(ours), _kind(theirs)) == pair and not agree(ours, theirs)

    small = shrink(case.request, fails)
    size = len(case.line)
    theirs = {k: v for k, v in implementation.ask(small).items() if k != "tag"}
    return Disagreement(case.name, small, _expected(small), theirs, size)
