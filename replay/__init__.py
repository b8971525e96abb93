"""schedlog.replay: reading real session logs, the CLI, DuckDB replay and the owner simulator."""

from .simulator import Scenario, SimulationResult, simulate

__all__ = ["Scenario", "SimulationResult", "simulate"]
