"""One-result commands (`check`, `cron`): a few lines for people, one JSON object for machines."""

from __future__ import annotations

from collections.abc import Iterator

from replay.cli.output import Format, json_document, json_line
from replay.terminal import printable
from replay.tools.candidate import CandidateVerdict
from replay.tools.cronreport import CronReport


def candidate_chunks(verdict: CandidateVerdict, fmt: Format) -> Iterator[str]:
    if fmt is not Format.TEXT:
        yield _as_json(verdict.to_json(), fmt)
    elif verdict.accepted:
        note = "" if verdict.checked else f" ({verdict.message})"
        yield printable(f"accepted: the candidate may be appended as event {verdict.index}{note}") + "\n"
    else:
        where = f"event {verdict.index}, {verdict.pointer}" if verdict.pointer else f"event {verdict.index}"
        yield printable(f"rejected ({verdict.stage}): {verdict.rule}: {verdict.message} ({where})") + "\n"


def cron_chunks(result: CronReport, fmt: Format) -> Iterator[str]:
    if fmt is not Format.TEXT:
        yield _as_json(result.to_json(), fmt)
        return
    zone = result.canonical_zone or "unknown"
    yield printable(f"expression  {result.expression!r}  ->  {result.canonical or 'not grammatical'}") + "\n"
    yield printable(f"time zone   {result.time_zone!r}  ->  {zone}") + "\n"
    verdict = "accepted" if result.code is None else f"rejected: {result.code}: {result.message}"
    yield printable(f"verdict     {verdict}") + "\n"
    yield f"next {len(result.occurrences)} after {result.after}:\n"
    for o in result.occurrences:
        marks = " ".join(m for m, on in (("DST", o.dst), ("offset-shifted", o.shifted)) if on)
        yield f"  {o.utc}   {o.local} {o.abbreviation or o.offset} ({o.offset})  {marks}".rstrip() + "\n"


def _as_json(value: dict[str, object], fmt: Format) -> str:
    return json_line(value) if fmt is Format.JSONL else json_document(value)
