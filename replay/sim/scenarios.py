"""Reading scenario files and showing a simulation as a timeline for people."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from invariant.jsvalue import js_compact_json
from replay.sim.simulator import EXPECTED, ScenarioError, SimulationResult
from replay.terminal import printable


def load_scenario(path: Path, name: str | None = None) -> dict[str, Any]:
    """A scenario object from a JSON file, or by name from a JSON-lines file of scenarios."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ScenarioError(f"cannot read {path}: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise ScenarioError(f"{path} is not UTF-8 text (byte {err.start}: {err.reason})") from None
    try:
        try:
            value = json.loads(text)
            candidates = value if isinstance(value, list) else [value]
        except json.JSONDecodeError:
            try:
                candidates = [json.loads(line) for line in text.splitlines() if line.strip()]
            except json.JSONDecodeError as err:
                raise ScenarioError(f"{path} is neither JSON nor JSON lines: {err}") from None
    except RecursionError:  # a scenario's values are written with the standard library too
        raise ScenarioError(
            f"{path} nests JSON deeper than the standard library reads (Python's recursion limit)"
        ) from None
    objects = [c for c in candidates if isinstance(c, dict)]
    if not objects:
        raise ScenarioError(f"{path} holds no scenario (a JSON object, or JSON lines of objects)")
    names = ", ".join(str(c.get("name")) for c in objects)
    if name is not None:
        objects = [c for c in objects if c.get("name") == name]
        if len(objects) != 1:
            raise ScenarioError(f"{path} holds {len(objects)} scenarios named {name!r} (names: {names})")
    elif len(objects) > 1:
        raise ScenarioError(f"{path} holds {len(objects)} scenarios; choose one with --name ({names})")
    return objects[0]


def _masked(results: list[object]) -> list[object]:
    """Error messages are not part of the contract: compare them as '*'."""
    return [{**r, "message": "*"} if isinstance(r, Mapping) and "code" in r and "message" in r else r for r in results]


def unmet_expectations(result: SimulationResult, expect: Mapping[str, Any]) -> list[str]:
    """Which of appended / followups / results / trace differ from a scenario's `expect`."""
    got = result.expectations()
    got["results"] = _masked(result.results)
    return [key for key in EXPECTED if key in expect and got[key] != expect[key]]


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
