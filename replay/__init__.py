"""schedlog.replay: reading real session logs, the CLI, DuckDB replay and the owner simulator."""

from replay.sim.simulator import Scenario, ScenarioError, SimulationResult, TooManyEvents, simulate

__all__ = ["Scenario", "ScenarioError", "SimulationResult", "TooManyEvents", "simulate"]
