"""The cases `schedlog conform` asks: every conformance vector, then seeded generated requests.

Fixture cases turn each worked example of `fixtures/conformance/` into the requests it implies
(a log's fold, its id allocation and receipts, each change's decode, a candidate's check, each
calendar example's cron, zone, create or resolve). Generated cases start from those values and
from random ones, then bend them where implementations classically diverge: JavaScript's
`trim()` against other whitespace sets, safe integers and `300.0`, zone aliases and case,
cron spellings, instants one millisecond or one gate apart, a key dropped or added, an event
dropped, repeated or moved. The same seed gives the same cases, operation by operation.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from invariant.conformance import BATCH_FRAMING, NO_COUNTERPART, OPERATIONS, answer, variant
from invariant.instant import MAX_MS, MIN_MS, format_instant, parse_instant
from invariant.jsvalue import MAX_SAFE_INTEGER
from invariant.profiles import PROFILES
from replay.conform.transport import request_line

Request = dict[str, Any]


@dataclass(frozen=True)
class Case:
    """One request to put to an implementation, named for where it came from."""

    name: str
    request: Request

    @property
    def op(self) -> str:
        return str(self.request["op"])

    @property
    def line(self) -> str:
        """The request as its protocol line, tagged with the case's name (what a reproduction
        sends: the answer names the case it answers)."""
        return request_line(self.request, tag=self.name)


def vectors_dir() -> Path:
    """The conformance vectors: shipped inside the package, or the checkout's fixtures."""
    here = Path(__file__).parent
    shipped = here / "vectors"
    return shipped if shipped.is_dir() else here.parents[1] / "fixtures" / "conformance"


def _jsonl(name: str) -> list[dict[str, Any]]:
    with (vectors_dir() / name).open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


# --- fixture cases ----------------------------------------------------------------------------------


def _log_cases(example: dict[str, Any], profile: str) -> Iterator[Case]:
    name, events, seed = example["name"], example["events"], example.get("seedLength", 0)
    base = {"events": events, "seedLength": seed, "profile": profile}
    if "candidate" in example:
        yield Case(f"{name}/check", {"op": "check", **base, "candidate": example["candidate"].get("data")})
        return
    yield Case(f"{name}/fold", {"op": "fold", **base})
    yield Case(f"{name}/allocate", {"op": "allocate", **base})
    for i, event in enumerate(events):
        if isinstance(event, dict) and event.get("type") == "schedule/change":
            yield Case(f"{name}/decode/{i}", {"op": "decode", "change": event.get("data"), "profile": profile})
            data = event.get("data")
            if isinstance(data, dict) and data.get("operation") == "dispatch":
                yield Case(f"{name}/receipt/{i}", {"op": "receipt", **base, "dispatchSeq": i})


def _calendar_case(e: dict[str, Any], n: int, profile: str | None = None) -> Case | None:
    """The request a calendar example implies; under another `profile`, only the creates of
    kinds that profile has (asked under it)."""
    kind, name = e["kind"], f"calendar-{n}/{e['kind']}"
    if profile not in (None, "calendar"):
        kinds = PROFILES[profile].record_kinds
        if kind not in ("after", "every", "at") or kind not in kinds:
            return None
    if kind == "cron_canonical":
        return Case(name, {"op": "cron", "cron": e["input"]})
    if kind == "zone":
        return Case(name, {"op": "zone", "zone": e["input"]})
    selector = {
        "after": lambda: {"after_seconds": e.get("after_seconds")},
        "every": lambda: {"every_seconds": e.get("every_seconds")},
        "at": lambda: {"at": e.get("input")},
        "cron_create": lambda: {"cron": e.get("cron"), "time_zone": e.get("time_zone")},
    }.get(kind)
    if selector is not None:
        request: Request = {"op": "create", "args": {"prompt": "check logs", **selector()}, "now": e["now"]}
        if e.get("implicit_time_zone") is not None:
            request["sessionTimeZone"] = e["implicit_time_zone"]
        if profile not in (None, "calendar"):
            request["profile"] = profile
        return Case(name, request)
    if kind == "cron_resolve":
        schedule = {"id": "schedule-1", "kind": "cron", "prompt": "p", "cron": e["cron"], "timeZone": e["time_zone"]}
        schedule["scheduledAt"] = e["scheduledAt"]
        return Case(name, {"op": "resolve", "schedule": schedule, "acceptedAt": e["acceptedAt"]})
    return None  # cron_next: no operation asks for a bare occurrence


def _record_cases(records: Sequence[tuple[str, dict[str, Any]]]) -> Iterator[Case]:
    for i, (profile, record) in enumerate(records):
        yield Case(f"record-{i}/framing", {"op": "framing", "schedule": record, "profile": profile})
        at = record["scheduledAt"]
        yield Case(f"record-{i}/view", {"op": "view", "schedule": record, "now": at, "profile": profile})


def fixture_cases(profile: str | None = None) -> list[Case]:
    """Every request the conformance vectors imply: each under its own profile, or, when
    `profile` is given, every log and record asked under it (schedlog's answer under that
    profile is the expected one) and the calendar examples' creates of its kinds."""
    cases: list[Case] = []
    for file, default in (("protocol-examples.jsonl", "calendar"), ("fixed-rate-examples.jsonl", "fixed-rate")):
        for example in _jsonl(file):
            cases.extend(_log_cases(example, profile or example.get("profile", default)))
    found = (_calendar_case(e, n, profile) for n, e in enumerate(_jsonl("calendar-examples.jsonl")))
    cases.extend(c for c in found if c is not None)
    records = pools().records
    if profile is not None:
        records = tuple((profile, r) for _, r in records if r.get("kind") in PROFILES[profile].record_kinds)
    cases.extend(_record_cases(records))
    return cases


# --- pools: the valid values generated cases start from ----------------------------------------------


@dataclass(frozen=True)
class Pools:
    logs: tuple[tuple[str, tuple[dict[str, Any], ...], int], ...]
    """(profile, events, seedLength) of every log the vectors call valid."""
    changes: tuple[tuple[str, Any], ...]
    records: tuple[tuple[str, dict[str, Any]], ...]
    crons: tuple[str, ...]
    zones: tuple[str, ...]


@cache
def pools() -> Pools:
    logs, changes, records = [], [], []
    for file, default in (("protocol-examples.jsonl", "calendar"), ("fixed-rate-examples.jsonl", "fixed-rate")):
        for example in _jsonl(file):
            profile = example.get("profile", default)
            events = example["events"]
            for event in events:
                if isinstance(event, dict) and event.get("type") == "schedule/change":
                    changes.append((profile, event.get("data")))
            if example.get("expect") == "ok" and "candidate" not in example:
                logs.append((profile, tuple(events), example.get("seedLength", 0)))
                data = [e.get("data") for e in events if isinstance(e, dict)]
                records += [(profile, d["schedule"]) for d in data if isinstance(d, dict) and "schedule" in d]
    calendar = _jsonl("calendar-examples.jsonl")
    crons = sorted({e["input"] for e in calendar if e["kind"] == "cron_canonical" and isinstance(e["input"], str)})
    zones = json.loads((vectors_dir() / "zones-icu.json").read_text(encoding="utf-8"))
    names = sorted({*zones["accepted"], *zones["refused"]})
    unique = list({json.dumps(r, sort_keys=True): r for r in records}.items())
    return Pools(tuple(logs), tuple(changes), tuple(r for _, r in unique), tuple(crons), tuple(names))


# --- bending values --------------------------------------------------------------------------------

EDGES = (" ", "\t", "\n", "\r", "\v", "\f", "\u00a0", "\ufeff", "\u2028", "\u2029", "\u3000", "\u1680", "\u2000")
"""Characters JavaScript's trim() removes (WhiteSpace and LineTerminator)."""
NOT_EDGES = ("\u0085", "\u180e", "\u200b", "\x1c", "\x1d", "\x1e", "\x1f", "\u2060", "x")
"""Characters other languages' trims remove and JavaScript's keeps (or no space at all)."""
NUMBERS = (
    0, 1, -1, 29, 30, 59, 60, 299, 300, 301, 86_400, 31_536_000, 31_536_001, MAX_SAFE_INTEGER,
    MAX_SAFE_INTEGER + 1, MAX_SAFE_INTEGER + 2, -MAX_SAFE_INTEGER, 2**63, 300.0, 30.5, 1e21, -0.0,
)  # fmt: skip
STEPS_MS = (1, -1, 999, 1000, -1000, 59_999, 60_000, -60_000, 299_999, 300_000, 300_001, 86_400_000, -86_400_000)


def _edge(rng: random.Random) -> str:
    return rng.choice(EDGES + NOT_EDGES)


def _text(rng: random.Random) -> str:
    """A prompt-like text: words, now and then with hostile characters and edges."""
    words = rng.choice(("check logs", "standup", "x", "", 'say "hi" </script>', "a\u2028b", "\ud800 lone", "é"))
    return (
        "".join(_edge(rng) for _ in range(rng.randrange(3)))
        + words
        + "".join(_edge(rng) for _ in range(rng.randrange(3)))
    )


def _bend_string(value: str, rng: random.Random) -> object:
    ms = parse_instant(value)
    if ms is not None and rng.random() < 0.7:
        moved = ms + rng.choice(STEPS_MS)
        return format_instant(moved) if MIN_MS <= moved <= MAX_MS else value + "x"
    choice = rng.randrange(8)
    if choice == 0:
        return _edge(rng) + value if rng.random() < 0.5 else value + _edge(rng)
    if choice == 1:
        return value.swapcase()
    if choice == 2 and value:
        return value[: rng.randrange(len(value))]
    if choice == 3:
        digits = [i for i, c in enumerate(value) if c.isdigit()]
        if digits:
            i = rng.choice(digits)
            return value[:i] + str(rng.randrange(10)) + value[i + 1 :]
    if choice == 4:
        return rng.choice(pools().zones)
    if choice == 5 and value.endswith(".000Z"):
        return value[:-5] + "Z"
    if choice == 6:
        return ""
    return value + rng.choice(("0", " ", "-1", "/x"))


def _bend_leaf(value: object, rng: random.Random) -> object:
    if isinstance(value, str):
        return _bend_string(value, rng)
    if isinstance(value, bool) or value is None:
        return rng.choice((0, "", not value, None, []))
    if isinstance(value, (int, float)):
        return rng.choice((value + 1, value - 1, float(value), value * 2, -value, str(value), *NUMBERS))
    return rng.choice((None, 0, "x"))


def _renumber(events: list[Any]) -> list[Any]:
    for i, event in enumerate(events):
        if isinstance(event, dict) and "seq" in event:
            event["seq"] = i
    return events


def _bend_list(value: list[Any], rng: random.Random, events: bool = False) -> list[Any]:
    out = list(value)
    choice = rng.randrange(3) if out else 3
    if choice == 0:
        del out[rng.randrange(len(out))]
    elif choice == 1:
        i = rng.randrange(len(out))
        out.insert(rng.randrange(len(out) + 1), copy.deepcopy(out[i]))
    elif choice == 2 and len(out) > 1:
        i, j = rng.sample(range(len(out)), 2)
        out[i], out[j] = out[j], out[i]
    else:  # a log's events stay objects (an array of others is no log: a bad request)
        out.append(rng.choice(({}, {"type": "x"})) if events else rng.choice((None, 0, "x", {})))
    return _renumber(out) if all(isinstance(e, dict) and "seq" in e for e in value) else out


def _bend_dict(value: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    out = dict(value)
    if out and rng.random() < 0.6:
        del out[rng.choice(sorted(out))]
    else:
        out[rng.choice(("extra", "title", "afterSeconds", "cron", "timeZone", "version"))] = rng.choice((1, "x", None))
    return out


def paths(value: object, path: tuple[object, ...] = ()) -> Iterator[tuple[object, ...]]:
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from paths(v, (*path, i))


def get_at(value: Any, path: Sequence[object]) -> Any:
    for step in path:
        value = value[step]
    return value


def replace_at(value: Any, path: Sequence[object], new: object) -> Any:
    if not path:
        return new
    out = copy.copy(value)
    out[path[0]] = replace_at(value[path[0]], path[1:], new)
    return out


def bend(value: object, rng: random.Random, events: bool = False) -> object:
    """`value` changed at one random place: a leaf bent, a key dropped or added, an element
    dropped, repeated or moved (events keep contiguous seqs, and stay objects). `events`: the
    value itself is a log's events."""
    path = rng.choice(list(paths(value)))
    target = get_at(value, path)
    if isinstance(target, dict):
        new: object = _bend_dict(target, rng)
    elif isinstance(target, list):
        new = _bend_list(target, rng, events=path == ("events",) or (events and path == ()))
    else:
        new = _bend_leaf(target, rng)
    return replace_at(value, path, new)


def bent(value: object, rng: random.Random, most: int = 2, events: bool = False) -> object:
    """`value` bent 0 to `most` times (a third of the cases stay valid)."""
    for _ in range(rng.choice((0, 0, *range(1, most + 1)))):
        value = bend(value, rng, events)
    return value


# --- generators, one per operation ---------------------------------------------------------------


def _profile(rng: random.Random, only: str | None) -> str:
    return only or rng.choice(sorted(PROFILES))


def _fits(pool: str, only: str | None) -> bool:
    """Whether a pool value of profile `pool` is a starting point for cases of `only` (the
    exact fixed-rate reading starts from the fixed-rate values)."""
    return only in (None, pool) or (only == "fixed-rate-exact" and pool == "fixed-rate")


def _instant(rng: random.Random) -> str:
    base = rng.choice((1_785_931_200_000, 1_798_761_600_000, 0, MAX_MS - 86_400_000, 1_772_841_600_000))
    return format_instant(min(MAX_MS, max(MIN_MS, base + rng.randrange(-10, 10) * rng.choice(STEPS_MS))))


def _cron_text(rng: random.Random) -> str:
    if rng.random() < 0.3:
        return str(bent(rng.choice(pools().crons), rng, 1))

    def field(lo: int, hi: int) -> str:
        pick = rng.randrange(7)
        a, b = sorted(rng.randint(lo, hi + 1) for _ in range(2))
        return (
            "*",
            str(a),
            f"0{a}",
            f"{a}-{b}",
            f"*/{rng.randint(1, 61)}",
            f"{a},{b}",
            f"{a}-{b}/{rng.randint(1, 9)}",
        )[pick]

    fields = [field(0, 59), field(0, 23), field(1, 31), field(1, 12), field(0, 7)]
    if rng.random() < 0.05:
        fields.append(field(0, 59))
    return rng.choice((" ", "  ", "\t")).join(fields)


def _args(rng: random.Random, kinds: Sequence[str] = ("after", "every", "at", "cron")) -> dict[str, Any]:
    kind = rng.choice([*kinds, "at-local"] if "at" in kinds else kinds)
    args: dict[str, Any] = {"prompt": _text(rng)}
    if kind == "after":
        args["after_seconds"] = rng.choice(NUMBERS)
    elif kind == "every":
        args["every_seconds"] = rng.choice(NUMBERS)
    elif kind == "at":
        args["at"] = _instant(rng).replace(".000Z", rng.choice((".000Z", "Z", "+08:00", "-05:30", "")))
    elif kind == "at-local":
        date, time = _instant(rng)[:10], _instant(rng)[11:19]
        args["at"] = {"date": date, "time": time}
        if rng.random() < 0.7:
            args["at"]["time_zone"] = rng.choice(pools().zones)
    else:
        args |= {"cron": _cron_text(rng), "time_zone": rng.choice(pools().zones)}
    return args


def _record(rng: random.Random, only: str | None) -> tuple[str, dict[str, Any]]:
    fitting = [r for r in pools().records if _fits(r[0], only)] or list(pools().records)
    profile, record = rng.choice(fitting)
    record = dict(record, prompt=_text(rng)) if rng.random() < 0.5 else record
    return only or profile, record


IDS = ("schedule-1", "schedule-2", "schedule-3", "schedule-4", "schedule-01", "schedule-0", "reminder")


def _fresh_log(rng: random.Random) -> list[dict[str, Any]]:
    """A valid log of after records under ids taken out of order, deleted and dispatched, among
    other events (id allocation and the fold's bookkeeping live here)."""
    events: list[dict[str, Any]] = []
    active: list[str] = []
    unused = list(IDS)
    rng.shuffle(unused)
    t = 1_785_931_200_000
    for _ in range(rng.randrange(1, 9)):
        t += rng.randrange(1, 100_000)
        pick, kind = rng.randrange(4), "schedule/change"
        if pick == 0 or not active:
            if not unused:
                break
            schedule_id = unused.pop()
            record = {"id": schedule_id, "kind": "after", "prompt": _text(rng).strip() or "p", "afterSeconds": 30}
            record["scheduledAt"] = format_instant(t + 30_000)
            data: object = {"version": 1, "operation": "create", "schedule": record}
            active.append(schedule_id)
        elif pick == 3:
            kind, data = "user/message", {"text": _text(rng)}
        else:
            schedule_id = active.pop(rng.randrange(len(active)))
            data = {"version": 1, "operation": ("delete", "dispatch")[pick - 1], "id": schedule_id}
        events.append({"type": kind, "seq": len(events), "time": t, "data": data})
    return events


def _log(rng: random.Random, only: str | None) -> Request:
    if rng.random() < 0.4:
        profile = _profile(rng, only)
        events = _fresh_log(rng)
        seed = rng.randrange(len(events) + 1) if rng.random() < 0.3 else 0
        return {"events": bent(events, rng, 1, events=True), "seedLength": seed, "profile": profile}
    fitting = [log for log in pools().logs if _fits(log[0], only)] or list(pools().logs)
    profile, kept, kept_seed = rng.choice(fitting)
    bent_events = bent(list(kept), rng, 3, events=True)
    return {"events": bent_events, "seedLength": bent(kept_seed, rng, 1), "profile": only or profile}


def _gen_decode(rng: random.Random, only: str | None) -> Request:
    fitting = [c for c in pools().changes if _fits(c[0], only)] or list(pools().changes)
    profile, change = rng.choice(fitting)
    return {"op": "decode", "change": bent(change, rng, 3), "profile": only or profile}


def _gen_fold(rng: random.Random, only: str | None) -> Request:
    return {"op": "fold", **_log(rng, only)}


def _gen_check(rng: random.Random, only: str | None) -> Request:
    log = _log(rng, only)
    if rng.random() < 0.1 and isinstance(log["events"], list):  # the seed covers the candidate itself
        log["seedLength"] = len(log["events"]) + 1
    changes = [c for p, c in pools().changes if _fits(p, log["profile"])] or [c for _, c in pools().changes]
    if rng.random() < 0.5:
        return {"op": "check", **log, "candidate": bent(rng.choice(changes), rng, 2)}
    operation, schedule_id = rng.choice(("create", "delete", "dispatch")), rng.choice(IDS)
    candidate: dict[str, Any] = {"version": 1, "operation": operation, "id": schedule_id}
    if operation == "create":
        at = format_instant(1_785_931_200_000 + rng.randrange(10**9))
        record = {"id": schedule_id, "kind": "after", "prompt": "p", "afterSeconds": 30, "scheduledAt": at}
        candidate = {"version": 1, "operation": operation, "schedule": record}
    return {"op": "check", **log, "candidate": candidate}


def _gen_allocate(rng: random.Random, only: str | None) -> Request:
    return {"op": "allocate", **_log(rng, only)}


def _gen_receipt(rng: random.Random, only: str | None) -> Request:
    log = _log(rng, only)
    events = log["events"]
    seq: object = rng.randrange(len(events)) if events and rng.random() < 0.9 else rng.choice((-1, 0, 1.0, "0"))
    return {"op": "receipt", **log, "dispatchSeq": seq}


def _gen_cron(rng: random.Random, only: str | None) -> Request:
    return {"op": "cron", "cron": _cron_text(rng)}


def _gen_zone(rng: random.Random, only: str | None) -> Request:
    return {"op": "zone", "zone": bent(rng.choice(pools().zones), rng, 1)}


def _gen_create(rng: random.Random, only: str | None) -> Request:
    profile = _profile(rng, only)
    kinds = PROFILES[profile].record_kinds if rng.random() < 0.8 else PROFILES["calendar"].record_kinds
    request = {"op": "create", "args": bent(_args(rng, kinds), rng, 1), "now": _instant(rng), "profile": profile}
    if rng.random() < 0.3:
        request["sessionTimeZone"] = rng.choice(pools().zones)
    return request


def _gen_resolve(rng: random.Random, only: str | None) -> Request:
    profile = only or rng.choice(("calendar", "fixed-rate"))
    kinds = tuple(k for k in ("every", "cron") if k in PROFILES[profile].record_kinds) or ("every",)
    for _ in range(50):  # a recurring record the create rules accept
        kind = rng.choice(kinds)
        args = {"prompt": "p", **({"every_seconds": rng.choice((300, 3600, 86_400))} if kind == "every" else {})}
        if kind == "cron":
            args |= {"cron": _cron_text(rng), "time_zone": rng.choice(pools().zones)}
        made = answer({"op": "create", "args": args, "now": _instant(rng), "profile": profile})
        if made["ok"]:
            break
    schedule = made.get("schedule") or rng.choice(pools().records)[1]
    target = parse_instant(schedule["scheduledAt"]) or 0
    accepted = target + rng.choice((0, 1, -1, 60_000, 299_999, 300_000, 3_600_000, 86_400_000 * rng.randrange(1, 40)))
    accepted = min(accepted, MAX_MS)
    return {
        "op": "resolve",
        "schedule": bent(schedule, rng, 1),
        "acceptedAt": format_instant(accepted),
        "profile": profile,
    }


def _gen_framing(rng: random.Random, only: str | None) -> Request:
    profile, record = _record(rng, only)
    if rng.random() < 0.5 or (only is not None and BATCH_FRAMING in NO_COUNTERPART[only]):
        return {"op": "framing", "schedule": record, "profile": profile}
    members = [_record(rng, profile) for _ in range(rng.randint(1, 3))]
    batch = [{"schedule": m, "occurrenceAt": rng.choice((m["scheduledAt"], _instant(rng)))} for _, m in members]
    return {"op": "framing", "batch": batch, "profile": profile}


def _gen_view(rng: random.Random, only: str | None) -> Request:
    profile, record = _record(rng, only)
    target = parse_instant(record["scheduledAt"]) or 0
    now = format_instant(min(MAX_MS, max(0, target + rng.choice(STEPS_MS) * rng.randrange(-3, 4))))
    request = {"op": "view", "schedule": record, "now": now, "profile": profile}
    if rng.random() < 0.6:
        last = min(MAX_MS, max(0, target + rng.choice(STEPS_MS) * rng.randrange(-3, 4)))
        request["lastRecurringAcceptedAt"] = format_instant(last)
    return request


GENERATORS: dict[str, Callable[[random.Random, str | None], Request]] = {
    "decode": _gen_decode,
    "fold": _gen_fold,
    "check": _gen_check,
    "cron": _gen_cron,
    "zone": _gen_zone,
    "create": _gen_create,
    "resolve": _gen_resolve,
    "receipt": _gen_receipt,
    "framing": _gen_framing,
    "view": _gen_view,
    "allocate": _gen_allocate,
}
assert GENERATORS.keys() == OPERATIONS.keys()


def generated_cases(op: str, count: int, seed: int, profile: str | None = None) -> list[Case]:
    """`count` requests for `op`; the same (op, seed, profile) gives the same requests."""
    rng = random.Random(f"{seed}/{op}/{profile}")
    return [Case(f"{op}-{seed}-{i}", GENERATORS[op](rng, profile)) for i in range(count)]


def all_cases(ops: Sequence[str], count: int, seed: int, profile: str | None = None) -> list[Case]:
    """The fixture cases of `ops`, then `count` generated cases of each; with `profile`, only
    the operations (and variants: a batch framing) it has a counterpart for, every request naming it."""
    if profile is not None:
        ops = [op for op in ops if op not in NO_COUNTERPART[profile]]
    fixtures = [c for c in fixture_cases(profile) if c.op in ops]
    cases = fixtures + [c for op in ops for c in generated_cases(op, count, seed, profile)]
    return cases if profile is None else [c for c in cases if variant(c.request) not in NO_COUNTERPART[profile]]
