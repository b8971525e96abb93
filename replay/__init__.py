"""schedlog.replay: reading real session logs, judging them, DuckDB replay, the owner simulator, the CLI.

The names most callers need, re-exported from their rooms (see the README's Layout).
"""

from replay.audit.verify import (
    SessionReport,
    Verdict,
    verify_bytes,
    verify_bytes_with_changes,
    verify_path,
    verify_paths,
)
from replay.reading import Mode, Reading
from replay.sim.simulator import Scenario, ScenarioError, SimulationResult, TooManyEvents, simulate

__all__ = [
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
