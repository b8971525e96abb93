"""The rule table: what each rule id means, for annotation titles and SARIF rule descriptors.

`PROTOCOL` and `LIVE` are docs/verify.md's two rule tables, row for row (a test holds them equal);
`FORMAT` names the findings of the log reader. A finer rule than a table names (a kind's
`decode.after.afterSeconds`, say) is described by its row; `describe` finds it.
"""

from __future__ import annotations

from typing import NamedTuple

from invariant.reminders import RULES as DELIVERY_RULES
from invariant.tools.judge import RULES


class Rule(NamedTuple):
    """One row: the rule ids it covers and what breaking them means."""

    ids: tuple[str, ...]
    text: str


PROTOCOL = (
    Rule(("decode.payload",), "the payload is not an object"),
    Rule(("decode.version",), '`version` is missing or not the number 1 (`1.0` is 1; `true` and `"1"` are not)'),
    Rule(("decode.operation",), "`operation` is not `create`, `delete` or `dispatch`"),
    Rule(
        ("decode.create.keys", "decode.delete.keys", "decode.record.keys"),
        "an object's key set is not exactly its shape's",
    ),
    Rule(
        ("decode.create.schedule", "decode.record.kind"),
        "`schedule` is not an object; `kind` unknown (or not in the profile)",
    ),
    Rule(
        ("decode.dispatch.shape",),
        "a dispatch's key set is none of the four shapes (a `null` optional key is present, not absent)",
    ),
    Rule(
        ("decode.id", "decode.prompt", "decode.prompt.js-whitespace"),
        "empty or untrimmed (JavaScript `trim()`; the last names Unicode-only whitespace such as NBSP or BOM)",
    ),
    Rule(
        ("decode.title", "decode.title.js-whitespace", "decode.title.length"),
        "(fixed-rate) a record's optional `title` is empty, untrimmed, or longer than 120 UTF-16 code units",
    ),
    Rule(("decode.after.afterSeconds", "decode.every.everySeconds"), "not a safe integer in range"),
    Rule(("decode.instant",), "not a canonical `YYYY-MM-DDTHH:MM:SS.mmmZ` instant of years 0001-9999"),
    Rule(
        (
            "decode.cron.types",
            "decode.cron.grammar",
            "decode.cron.canonical",
            "decode.cron.zone-shape",
            "decode.cron.whole-minute",
        ),
        "cron record fields",
    ),
    Rule(("fold.seed.bounds",), "seedLength is not a safe integer within 0..event count"),
    Rule(("fold.create.reuse",), "an id created twice in the owned log"),
    Rule(("fold.delete.inactive", "fold.dispatch.inactive"), "a transition on an id that is not active"),
    Rule(("fold.dispatch.kind-shape",), "the dispatch shape does not fit the record kind"),
    Rule(
        ("fold.every.arith", "fold.cron.progression"),
        "recurring progression (acceptedAt before target; occurrence/next out of order)",
    ),
    Rule(("fold.gate",), "two distinct recurring batches less than 300 s apart, or a batch earlier than the last"),
)
"""The protocol rules a log breaks (docs/verify.md, "Rule ids")."""

LIVE = (
    Rule(
        ("live.cron.create.frequency", "live.cron.dispatch.frequency"),
        "two nominal local matches can be < 5 min apart (400-year cycle, cross-midnight seams)",
    ),
    Rule(
        ("live.cron.create.zone-unknown", "live.cron.dispatch.zone-unknown"),
        "the zone is unknown to the reference's zone data",
    ),
    Rule(
        ("live.cron.create.no-matching-date", "live.cron.dispatch.no-matching-date"),
        "no calendar date matches (`0 0 31 2 *`)",
    ),
    Rule(("live.cron.create.zone-alias",), "a create stores a link (`US/Eastern`) instead of the canonical name"),
    Rule(
        ("live.cron.create.target",),
        "`scheduledAt` is not an occurrence (DST gap, second pass of an overlap, not a match)",
    ),
    Rule(
        ("live.cron.dispatch.occurrence", "live.cron.dispatch.next"),
        "the dispatch differs from the current calendar decision",
    ),
)
"""The live rules a candidate event breaks (docs/check-cron.md, `schedlog check`)."""

FORMAT = (
    Rule(("format.unreadable",), "the file cannot be read, or holds no session log"),
    Rule(
        ("format.header",),
        "the header line is missing, malformed or not terminated, or lacks a field the strict reader requires"
        " (delegationDepth, say: --mode lenient reads it)",
    ),
    Rule(("format.headerless",), "no session header: the file holds bare events"),
    Rule(
        ("format.header.cwd", "format.header.placeholder"),
        "the header's cwd is not an absolute path, or a fixture placeholder",
    ),
    Rule(("format.name-version",), "the file name's format version disagrees with the header's"),
    Rule(("format.version.newer",), "a format version newer than schedlog knows: the log cannot be judged"),
    Rule(
        ("format.event.unknown",),
        "an event of a type the log's reader does not know, not marked ignorable: the reader of 611615650f on "
        "refuses to interpret the log (unsupported)",
    ),
    Rule(
        ("format.readers",),
        "the profile, and so the reader, is undecided: which of the possible readers would refuse the log's event "
        "types or its ignorable markers",
    ),
    Rule(("format.is-seeded",), "the header's isSeeded contradicts the log's inherited session/end-seed marker"),
    Rule(("format.blank-line", "format.unparsable"), "a line is blank, or not one JSON value"),
    Rule(("format.envelope",), "an event's envelope (type, seq, time, data, surface metadata) breaks its shape"),
    Rule(
        ("format.surface",),
        "a replacement of surface nodes that are not current, in order and cited (a tool/result replacement: "
        "of one current tool/result, changing only its result's content)",
    ),
    Rule(("format.malformed-row",), "a packed chunk row breaks its shape"),
    Rule(("format.seq-gap",), "event seqs are not contiguous from 0"),
    Rule(
        ("format.session",),
        "the session layer refuses an event: a message without an identified message of its role and source, "
        "a request/header without provider and model, obsolete vocabulary, a malformed legacy shape",
    ),
    Rule(("format.torn-tail", "format.torn-frame"), "the last line or zstd frame is torn (a crash tail)"),
    Rule(("format.zstd",), "the Zstandard container is corrupt"),
    Rule(
        ("format.zstd.framing",),
        "the Zstandard file is not framed as the harness frames a log (compressed whole by a general tool)",
    ),
    Rule(
        ("format.zstd.bound", "format.depth.bound"),
        "the log passes a bound of schedlog's own (a zstd log's plaintext, values nested past ~1,000 levels): "
        "it is not read further",
    ),
    Rule(("format.generations",), "other format generations of the session lie beside the file"),
)
"""The findings of the log reader."""

SQLITE = (
    Rule(
        ("sqlite.row",),
        "a session store's row does not decode (its JSON, packed chunks, compressed data or varint seqs) or "
        "breaks the seqs, and a turn/end follows: committed corruption, the session cannot be loaded",
    ),
    Rule(("sqlite.tail",), "a session store's rows after its last turn/end that the harness drops on load"),
)
"""The findings only a SQLite session store can have (replay/sources/sqlitestore.py)."""

TRANSCRIPT = tuple(Rule((rule,), text) for rule, text in RULES.items())
"""The findings on `schedule_*` tool calls and results (docs/host.md, "Tool transcripts")."""

DELIVERY = tuple(Rule((rule,), text) for rule, text in DELIVERY_RULES.items())
"""The soft delivery checks (docs/host.md, "Did each reminder reach the conversation?")."""

TABLE = {rule_id: row for row in (*PROTOCOL, *LIVE, *FORMAT, *SQLITE, *TRANSCRIPT, *DELIVERY) for rule_id in row.ids}

HOST = (
    *("host.cron.canonical", "host.cron.grammar", "host.legacy-reminders", "host.reminders", "host.receipt"),
    *("host.history", "host.history.duplicate-message", "host.history.last-delivery", "host.history.prompt"),
    *("host.history.pruned", "host.history.records", "host.history.unavailable", "host.receipt.unmatched"),
    *("host.message.task-deleted", "host.message.unreceipted", "host.session.missing"),
    *("host.record", "host.record.expression", "host.record.id", "host.record.keys", "host.record.kind"),
    *("host.record.prompt", "host.record.time", "host.record.title", "host.record.title.length"),
    *("host.soft.history-order", "host.soft.occurrence", "host.soft.overdue", "host.soft.retention"),
    *("host.soft.undelivered", "host.store.ignored", "host.store.json", "host.store.tables", "host.store.unit"),
    *("host.store.version", "host.task.key", "host.task.keys", "host.task.status"),
    *("host.weekly.weekdays", "host.weekly.weekdays.order"),
    *("host.window", "host.window.bounds", "host.window.end", "host.window.order", "host.window.start"),
)
"""The findings of a Host task store and of the deliveries it made (invariant/hoststore.py)."""

RESOLVE = ("live.resolve.accepted", "live.resolve.calendar", "live.resolve.rule", "live.resolve.zone")
"""Why a live owner could not resolve a record now (invariant/live.py): a candidate's finding."""

CODES = frozenset((*TABLE, *HOST, *RESOLVE))
"""Every code a finding or a violation can carry (a test holds it against the sources)."""


def known(selector: str) -> bool:
    """Whether `selector` names a code, or a prefix of one at a dot (`format.header`, `host`)."""
    return selector in CODES or any(code.startswith(selector + ".") for code in CODES)


def nearest(selector: str) -> list[str]:
    """The known codes and prefixes nearest `selector` in spelling (for a message), best first."""
    import difflib

    prefixes = {".".join(code.split(".")[:n]) for code in CODES for n in range(1, code.count(".") + 1)}
    return difflib.get_close_matches(selector, sorted(CODES | prefixes), n=3, cutoff=0.5)


def row_of(rule_id: str) -> Rule | None:
    """The row covering `rule_id`: its own, else the row of its longest dotted prefix."""
    parts = rule_id.split(".")
    for n in range(len(parts), 0, -1):
        found = TABLE.get(".".join(parts[:n]))
        if found is not None:
            return found
    return None


def describe(rule_id: str) -> str:
    """What breaking `rule_id` means (the rule id itself when no row covers it)."""
    row = row_of(rule_id)
    return rule_id if row is None else row.text
