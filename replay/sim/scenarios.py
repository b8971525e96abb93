"""Reading scenario files, and whether a run met a scenario's expectations."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from replay.sim.simulator import EXPECTED, MAX_SCENARIO_DEPTH, ScenarioError, SimulationResult, nested_beyond


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
        candidates = None
    if candidates is None or nested_beyond(candidates, MAX_SCENARIO_DEPTH):
        raise ScenarioError(f"{path} nests JSON deeper than {MAX_SCENARIO_DEPTH} levels") from None
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
