"""`schedlog simulate` and `fuzz`: the owner on a virtual clock."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from replay.cli.options import SIMULATED_PROFILE
from replay.cli.output import (
    Format,
    emit,
    format_option,
    json_text,
)
from replay.cli.running import InputError, file_name, say, writing_to
from replay.sim.limits import MAX_STEPS

MAX_SIMULATED_EVENTS = 600_000
"""`simulate`'s default bound on appended events: a run holds its whole log and trace in memory,
about 2.5 KB an event (measured: 200,000 events of one `every` record peaked at 0.53 GB RSS), so
the default keeps a run under 2 GB; one that would go further (a century of five-minute
reminders, say) stops with a clear message instead of being killed."""


@click.command()
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("--name", default=None, help="Pick one scenario of a JSON-lines file by name.")
@click.option("--log", "log_path", type=click.Path(dir_okay=False), default=None, help="Write the session log here.")
@format_option(Format.TEXT, Format.JSON)
@click.option(
    "--max-events",
    type=click.IntRange(min=0),
    default=MAX_SIMULATED_EVENTS,
    show_default=True,
    help=(
        "Refuse a run that appends more events, or holds more than 1,000 characters of reminder text "
        "per event allowed (it holds its whole log in memory, about 2.5 KB an event)."
    ),
)
@SIMULATED_PROFILE
@click.option(
    "--live-to",
    "live_to",
    type=click.Path(file_okay=False),
    default=None,
    help="Also write the session log into this folder as it happens, each event at its time (for `schedlog watch`).",
)
@click.option(
    "--speed",
    type=click.FloatRange(min=0.001),
    default=60.0,
    show_default=True,
    help="With --live-to: virtual seconds written per real second.",
)
def simulate(
    scenario: str,
    name: str | None,
    log_path: str | None,
    fmt: Format,
    max_events: int,
    profile: str,
    live_to: str | None,
    speed: float,
) -> None:
    """Run the reference live-owner simulator on a SCENARIO (JSON) and print its timeline.

    When the scenario carries `expect`, exit 1 if the run does not meet it. With --live-to DIR,
    the log is also written into DIR/NAME.session.jsonl a line at a time, paced by its events'
    times, while `schedlog watch DIR` follows it.
    """
    from replay.atomic import write_atomic_chunks
    from replay.cli.output.timeline import timeline_lines
    from replay.sim.scenarios import load_scenario, unmet_expectations
    from replay.sim.simulator import Scenario, ScenarioError, TooManyEvents
    from replay.sim.simulator import simulate as run_simulation

    try:
        obj = load_scenario(Path(scenario), name)
        result = run_simulation(Scenario.from_json(obj), profile, max_events)
    except TooManyEvents as err:
        raise InputError(f"{err}; --max-events raises the bound") from None
    except ScenarioError as err:
        raise InputError(str(err)) from None
    if log_path is not None:
        with writing_to(Path(log_path)):
            write_atomic_chunks(Path(log_path), result.session_log_lines())
    if live_to is not None:
        from replay.sim.livelog import paced, write_live

        live = Path(live_to) / f"{file_name(result.header.get('id') or Path(scenario).stem)}.session.jsonl"
        try:
            write_live(live, paced(result.header, result.events, speed))
        except FileExistsError:
            raise InputError(f"{live} exists: a live log is written to a new file") from None
        except OSError as err:
            raise InputError(f"cannot write {live}: {err.strerror or err}") from None
    expect = obj.get("expect")  # an object or null: Scenario.from_json has checked it
    unmet = unmet_expectations(result, expect) if expect is not None else []
    if fmt is Format.JSON:
        out = {**result.expectations(), "timeline": result.timeline, "unmet": unmet}
        import json

        emit(json.JSONEncoder(ensure_ascii=False, indent=2).iterencode(out))
        say()
    else:
        emit(timeline_lines(result))
        if expect is not None:
            say("expectations: " + ("met" if not unmet else "NOT met: " + ", ".join(unmet)))
    sys.exit(1 if unmet else 0)


@click.command()
@click.option("--seed", type=int, default=0, show_default=True, help="First seed; run r uses seed + r.")
@click.option("--runs", type=click.IntRange(min=1), default=200, show_default=True)
@click.option(
    "--steps",
    type=click.IntRange(1, MAX_STEPS),
    default=40,
    show_default=True,
    help=f"Steps per run (at most {MAX_STEPS:,}: a run holds its whole log in memory).",
)
@SIMULATED_PROFILE
def fuzz(seed: int, runs: int, steps: int, profile: str) -> None:
    """Random scenarios checked against the owner's invariants; failures are shrunk.

    Exit 0 when every run holds, 1 when any fails (its seed and a small scenario are printed).
    """
    from replay.sim.fuzz import fuzz as run_fuzz
    from replay.sim.fuzz import scenario_json

    total, failures = run_fuzz(seed, runs, steps, profile)
    again = "schedlog simulate FILE" + ("" if profile == "calendar" else f" --profile {profile}")
    for failure in failures:
        say(f"FAIL seed {failure.seed}:")
        for violation in failure.violations:
            say(f"    {violation.invariant}: {violation.detail}")
        say(f"    shrunk scenario ({again} reproduces it):")
        say("    " + json_text(scenario_json(failure.scenario)))
    say(f"{total} run(s) from seed {seed}: {total - len(failures)} held, {len(failures)} failed")
    sys.exit(1 if failures else 0)
