"""A simulation (`simulate`) as a timeline for people."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from invariant.jsvalue import js_compact_json
from replay.sim.simulator import SimulationResult
from replay.terminal import printable


def _effect_text(effect: Mapping[str, Any], result: SimulationResult) -> str:
    kind = str(effect["effect"])
    if kind == "flush":
        return f"checkpoint {effect['outcome']}"
    if kind == "append":
        return f"append {js_compact_json(result.appended[effect['index']])}"
    if kind == "append_rejected":
        return f"append REJECTED {js_compact_json(effect['change'])}"
    if kind == "claim":
        return f"claim {effect['outcome']}"
    if kind == "followup":
        text = str(result.followups[effect["index"]])
        return "followup\n" + "\n".join("                |  " + line for line in text.split("\n"))
    return kind.replace("_", " ")


def timeline_lines(result: SimulationResult) -> Iterator[str]:
    """Virtual time, input, effects, followup texts and tool results, one block per step, one
    printable line (newline included) at a time."""
    for entry in result.timeline:
        args = js_compact_json(entry["args"]) if entry["args"] else ""
        yield from _printable_lines(f"{entry['at']}  {entry['do']} {args}".rstrip())
        for effect in entry["effects"]:
            when = "" if effect["at"] == entry["at"] else f" (at {effect['at']})"
            yield from _printable_lines(f"    {_effect_text(effect, result)}{when}")
        for value in entry["results"]:
            yield from _printable_lines(f"    => {js_compact_json(value)}")


def _printable_lines(text: str) -> Iterator[str]:
    """Each line of `text` with its control characters escaped (a log cannot drive the terminal)."""
    for line in text.split("\n"):
        yield printable(line) + "\n"
