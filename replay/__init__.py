"""schedlog.replay: reading real session logs, judging them, DuckDB replay, the owner simulator, the CLI.

The names most callers need, re-exported from their rooms (see the README's Layout), each loaded
when first used (invariant.exports): the command line starts without loading the judge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from invariant.exports import lazy_exports

if TYPE_CHECKING:
    from replay.audit.auditrun import Audit, verify_paths
    from replay.judge.report import SessionReport
    from replay.judge.verdicts import Verdict
    from replay.judge.verify import verify_bytes, verify_bytes_with_changes, verify_path
    from replay.reading import Mode, Reading
    from replay.sim.simulator import Scenario, ScenarioError, SimulationResult, TooManyEvents, simulate

_HOMES = {
    "audit.auditrun": ("Audit", "verify_paths"),
    "judge.report": ("SessionReport",),
    "judge.verdicts": ("Verdict",),
    "judge.verify": (
        "verify_bytes",
        "verify_bytes_with_changes",
        "verify_path",
    ),
    "reading": ("Mode", "Reading"),
    "sim.simulator": ("Scenario", "ScenarioError", "SimulationResult", "TooManyEvents", "simulate"),
}
"""Each public name, by the module that holds it."""

__getattr__, __dir__ = lazy_exports(__name__, _HOMES, globals())

__all__ = [
    "Audit",
    "Mode",
    "Reading",
    "Scenario",
    "ScenarioError",
    "SessionReport",
    "SimulationResult",
    "TooManyEvents",
    "Verdict",
    "simulate",
    "verify_bytes",
    "verify_bytes_with_changes",
    "verify_path",
    "verify_paths",
]
