"""The conformance protocol's answers: what a correct implementation replies to each request.

`schedlog conform` drives an implementation in any language with JSON requests, one per line,
and compares its answers with `answer(request)` here (docs/conformance.md is the protocol's
description). Each operation is one function of the protocol core; an answer is
`{"ok": true, ...}` with the log's JSON shapes, or `{"ok": false, "code": ...}` with the
reference's error code. Only `ok`, `code` and the operation's result keys are compared: the
`rule` and `message` of a refusal are schedlog's explanation, not the reference's (whose
corrupt-log error carries no detail).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .changes import CronRecord, EveryRecord, Record, decode_change, decode_record
from .create import create_record, select_profile_kind
from .cron import canonical_cron
from .errors import ScheduleInputError, ScheduleLogError
from .folding import fold
from .framing import BatchItem, render_batch_framing, render_framing
from .ids import allocate_id
from .instant import parse_instant
from .live import check_candidate, resolve_cron, resolve_every
from .presentation import present
from .profiles import PROFILES, Profile
from .tools.local import create_args_problems
from .view import schedule_view
from .zones import canonical_zone

Answer = dict[str, Any]
BAD_REQUEST = "bad_request"
"""The code of a request the protocol does not define (unknown op, a missing or mistyped field)."""
INVALID_ARGUMENTS = "invalid_arguments"
"""The code of tool arguments that break the create arguments' shape."""
EXPLANATION = frozenset({"rule", "message"})
"""Keys of a refusal that explain it and are not compared."""
UNSUPPORTED = "unsupported"
"""The code of an operation the request's profile has no counterpart for."""
BATCH_FRAMING = "framing/batch"
"""The name of a `framing` request with a `batch`: a variant some revisions have no counterpart for."""
NO_COUNTERPART: dict[str, frozenset[str]] = {
    "calendar": frozenset(),
    "after-only": frozenset({"cron", "zone", "resolve", BATCH_FRAMING}),
    "fixed-rate": frozenset({"cron", "zone", "receipt"}),
    "fixed-rate-exact": frozenset({"cron", "zone", "receipt"}),
}
"""The operations (and variants, `variant`) each profile's revision has no counterpart for:
after-only knows no zone, cron or recurring record, and renders no batch (its `domain.ts` has
only `renderReminderFraming`); the released fixed-rate package has no cron kind, exports no
zone canonicalizer and no receipt function. A request naming such a profile is answered
`unsupported`, and `schedlog conform --profile` does not ask it."""


def variant(request: Mapping[str, Any]) -> str:
    """What a request asks, as NO_COUNTERPART names it: its `op`, or BATCH_FRAMING for a
    framing of a batch."""
    op = request.get("op")
    return BATCH_FRAMING if op == "framing" and "batch" in request else str(op)


class BadRequest(Exception):
    """The request is not one the protocol defines."""


def _field(request: Mapping[str, Any], name: str, default: object = BadRequest) -> Any:
    if name in request:
        return request[name]
    if default is BadRequest:
        raise BadRequest(f"{name} is required")
    return default


def _profile(request: Mapping[str, Any]) -> Profile:
    name = _field(request, "profile", "calendar")
    if type(name) is not str or name not in PROFILES:
        raise BadRequest(f"profile must be one of {', '.join(PROFILES)}")
    return PROFILES[name]


def _events(request: Mapping[str, Any]) -> list[object]:
    events = _field(request, "events")
    if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
        raise BadRequest("events must be an array of objects")
    return events


def _instant(request: Mapping[str, Any], name: str, default: object = BadRequest) -> Any:
    text = _field(request, name, default)
    if text is None and default is None:
        return None
    ms = parse_instant(text) if type(text) is str else None
    if ms is None:
        raise BadRequest(f"{name} must be a canonical instant")
    return ms


def _record(request: Mapping[str, Any], profile: Profile, value: object = BadRequest) -> Record:
    return decode_record(_field(request, "schedule") if value is BadRequest else value, profile)


def _decode(request: Mapping[str, Any]) -> Answer:
    return {"change": decode_change(_field(request, "change"), _profile(request)).to_json()}


def _fold(request: Mapping[str, Any]) -> Answer:
    return fold(_events(request), _field(request, "seedLength", 0), _profile(request)).to_json()


def _check(request: Mapping[str, Any]) -> Answer:
    events, seed, profile = _events(request), _field(request, "seedLength", 0), _profile(request)
    return check_candidate(events, _field(request, "candidate"), seed, profile).to_json()


def _cron(request: Mapping[str, Any]) -> Answer:
    return {"cron": canonical_cron(_field(request, "cron"))}


def _zone(request: Mapping[str, Any]) -> Answer:
    return {"zone": canonical_zone(_field(request, "zone"))}


def _create(request: Mapping[str, Any]) -> Answer:
    args, now, profile = _field(request, "args"), _instant(request, "now"), _profile(request)
    schedule_id = _field(request, "id", "schedule-1")
    session_zone = _field(request, "sessionTimeZone", None)
    if type(schedule_id) is not str or (session_zone is not None and type(session_zone) is not str):
        raise BadRequest("id and sessionTimeZone must be strings")
    problems = create_args_problems(args, profile.name)
    if problems:
        raise ScheduleInputError(INVALID_ARGUMENTS, f"schedule_create arguments: {problems[0]}")
    kind = select_profile_kind(args, profile)
    return {"schedule": create_record(kind, args, now, schedule_id, session_zone, profile).to_json()}


def _resolve(request: Mapping[str, Any]) -> Answer:
    record, accepted = _record(request, _profile(request)), _instant(request, "acceptedAt")
    if isinstance(record, EveryRecord):
        occurrence, following = resolve_every(record, accepted)
    elif isinstance(record, CronRecord):
        occurrence, following = resolve_cron(record, accepted)
    else:
        raise BadRequest("resolve takes an every or cron schedule")
    return {"occurrenceAt": occurrence, "nextScheduledAt": following}


def _receipt(request: Mapping[str, Any]) -> Answer:
    events, seed, profile = _events(request), _field(request, "seedLength", 0), _profile(request)
    found = present(events, _field(request, "dispatchSeq"), seed, profile)
    return {"receipt": None if found is None else found.to_json()}


def _framing(request: Mapping[str, Any]) -> Answer:
    profile = _profile(request)
    if "batch" not in request:
        return {"text": render_framing(_record(request, profile), profile)}
    batch = _field(request, "batch")
    if not isinstance(batch, list):
        raise BadRequest("batch must be an array")
    items = []
    for member in batch:
        if not isinstance(member, dict) or type(member.get("occurrenceAt")) is not str:
            raise BadRequest("each batch member has a schedule and an occurrenceAt string")
        items.append(BatchItem(_record(member, profile), member["occurrenceAt"]))
    return {"text": render_batch_framing(items, profile)}


def _view(request: Mapping[str, Any]) -> Answer:
    profile = _profile(request)
    record, now = _record(request, profile), _instant(request, "now")
    last = _field(request, "lastRecurringAcceptedAt", None)
    if last is not None:
        _instant(request, "lastRecurringAcceptedAt")
    return {"view": schedule_view(record, now, last, profile).to_json()}


def _allocate(request: Mapping[str, Any]) -> Answer:
    return {"id": allocate_id(fold(_events(request), _field(request, "seedLength", 0), _profile(request)))}


OPERATIONS: dict[str, Callable[[Mapping[str, Any]], Answer]] = {
    "decode": _decode,
    "fold": _fold,
    "check": _check,
    "cron": _cron,
    "zone": _zone,
    "create": _create,
    "resolve": _resolve,
    "receipt": _receipt,
    "framing": _framing,
    "view": _view,
    "allocate": _allocate,
}
"""Every operation of the protocol, by its `op` name."""


def answer(request: object) -> Answer:
    """The correct answer to one request (without its `tag`, which the transport echoes)."""
    try:
        if not isinstance(request, dict):
            raise BadRequest("a request is a JSON object")
        operation = OPERATIONS.get(request.get("op"))  # type: ignore[arg-type]
        if operation is None:
            raise BadRequest(f"op must be one of {', '.join(OPERATIONS)}")
        if "profile" in request and (asked := variant(request)) in NO_COUNTERPART.get(_profile(request).name, ()):
            return {"ok": False, "code": UNSUPPORTED, "message": f"{request['profile']} has no {asked}"}
        return {"ok": True, **operation(request)}
    except ScheduleLogError as err:
        return {"ok": False, "code": err.code, "rule": err.rule, "message": err.message}
    except ScheduleInputError as err:
        return {"ok": False, "code": err.code, "message": err.message}
    except BadRequest as err:
        return {"ok": False, "code": BAD_REQUEST, "message": str(err)}


def compared(value: Mapping[str, Any]) -> dict[str, Any]:
    """The part of an answer two implementations must agree on: all but the tag and, for a
    refusal, its explanation."""
    drop = EXPLANATION | {"tag"} if value.get("ok") is False else {"tag"}
    return {k: v for k, v in value.items() if k not in drop}


def agree(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> bool:
    """Whether two answers agree (JSON equality of their compared parts)."""
    return _same(compared(expected), compared(actual))


def _same(a: object, b: object) -> bool:
    """JSON equality: numbers by value (300 is 300.0), booleans apart from numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def ops_of(names: Sequence[str]) -> list[str]:
    """The named operations, checked (ValueError names an unknown one)."""
    unknown = [n for n in names if n not in OPERATIONS]
    if unknown:
        raise ValueError(f"unknown operation(s) {', '.join(unknown)}; choose among {', '.join(OPERATIONS)}")
    return list(names)
