"""Calendar engine speed: frequency-proof cost per rule, next-occurrence throughput vs cronsim.

    pip install -e '.[bench]' && python bench/calendar.py

Goals (issue 3): the frequency proof takes <= 5 ms for the worst of a few hundred real-world
rules; next-occurrence throughput >= 1x cronsim on the same rules and zones.
"""

from __future__ import annotations

import sys
from pathlib import Path

# This file is named calendar.py: drop its own folder from the path so that the standard
# library's `calendar` (which cronsim imports) is not shadowed by it.
sys.path[0] = str(Path(__file__).resolve().parent.parent)

import itertools  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from datetime import UTC, datetime  # noqa: E402

from invariant.cron import frequency_ok, parse_cron  # noqa: E402
from invariant.occurrences import next_occurrence  # noqa: E402
from invariant.zones import zone_rules  # noqa: E402

MINUTES = ["0", "30", "15", "*/5", "*/10", "*/15", "0,30", "5,35", "45", "0-55/5"]
HOURS = ["*", "9", "0", "*/2", "8-17", "9,13,17", "2", "23", "6-22/4", "12"]
DAYS = ["* * *", "* * 1-5", "* * 0", "* * 0,6", "1 * *", "15 * *", "1,15 * *", "* 1 *", "1 1,4,7,10 *", "L"]
ZONES = ["UTC", "America/New_York", "Europe/Berlin", "Asia/Calcutta", "Australia/Sydney"]


def expressions() -> list[str]:
    """A few hundred crontab-style rules (minute x hour x day patterns seen in the wild)."""
    out = []
    for m, h, d in itertools.product(MINUTES, HOURS, DAYS):
        if d == "L":
            d = "28-31 * *"
        expr = f"{m} {h} {d}"
        if frequency_ok(parse_cron(expr)):
            out.append(expr)
    return out


def time_frequency_proof(exprs: list[str]) -> list[float]:
    costs = []
    for e in exprs:
        rule = parse_cron(e)
        start = time.perf_counter()
        for _ in range(20):
            frequency_ok(rule)
        costs.append((time.perf_counter() - start) / 20 * 1000)
    return costs


def throughput_schedlog(exprs: list[str], steps: int) -> float:
    after0 = int(datetime(2026, 1, 1, tzinfo=UTC).timestamp() * 1000)
    count = 0
    start = time.process_time()
    for zone_name in ZONES:
        zone = zone_rules(zone_name)
        for e in exprs:
            rule = parse_cron(e)
            after = after0
            for _ in range(steps):
                found = next_occurrence(rule, zone, after)
                if found is None:
                    break
                after = found
                count += 1
    return count / (time.process_time() - start)


def throughput_cronsim(exprs: list[str], steps: int) -> float:
    from cronsim import CronSim

    count = 0
    start = time.process_time()
    for zone_name in ZONES:
        zone = zone_rules(zone_name)
        begin = datetime(2026, 1, 1, tzinfo=UTC).astimezone(zone)
        for e in exprs:
            it = CronSim(e, begin)
            for _ in range(steps):
                next(it)
                count += 1
    return count / (time.process_time() - start)


def main() -> None:
    exprs = expressions()
    costs = time_frequency_proof(exprs)
    print(f"{len(exprs)} rules x {len(ZONES)} zones")
    print(
        f"frequency proof: median {statistics.median(costs) * 1000:.1f} us, "
        f"worst {max(costs) * 1000:.1f} us (goal: worst <= 5 ms)"
    )
    steps = 50
    ours = throughput_schedlog(exprs, steps)
    try:
        theirs = throughput_cronsim(exprs, steps)
    except ImportError:
        print(f"next occurrence: schedlog {ours:,.0f}/s CPU; cronsim not installed (pip install -e '.[bench]')")
        return
    print(f"next occurrence: schedlog {ours:,.0f}/s CPU, cronsim {theirs:,.0f}/s CPU")
    print(f"ratio schedlog/cronsim: {ours / theirs:.2f}x (goal >= 1x)")


if __name__ == "__main__":
    main()
