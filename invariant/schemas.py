"""The v1 JSON Schemas (2020-12), rendered from the same shapes the decoder checks.

`documents()` returns every schema file by its path under `schemas/`. Each document names, in
its top-level description, the rules JSON Schema cannot express; those stay with the decoder,
the fold and live validation.
"""

from __future__ import annotations

from collections.abc import Iterable

from . import hoststore as host
from .logshapes import (
    CURRENT_FORMAT_VERSION,
    EVENT_SHAPE,
    EVENT_SHAPE_V2,
    EVENT_SHAPE_V3,
    HEADER_SHAPE_V0,
    HEADER_SHAPE_V2,
    REPLACE_OP,
    REPLACE_OP_V3,
    ROW_DATA_SHAPES,
    ROW_SHAPE,
    ROW_TAGS,
)
from .profiles import get_profile
from .shapes import (
    DELETE_SHAPE,
    DISPATCH_SHAPES,
    RECORD_SHAPES,
    TITLED_RECORD_SHAPES,
    JsonSchema,
    ObjectShape,
    create_shape,
)
from .tools.local import (
    AT_LOCAL,
    CREATE_ARGS,
    DELETE_ARGS,
    DELETED,
    ERROR_SHAPES,
    LIST_ARGS,
    NOT_FOUND,
    VIEW_SHAPES,
)
from .tools.model import shapes_in
from .tools.names import HOST, SEED
from .tools.surfaces import SURFACES

DIALECT = "https://json-schema.org/draft/2020-12/schema"
ID_PREFIX = "urn:schedlog:schema:"

CHANGE_FILE = "schedule-change.v1.schema.json"


def schema_id(path: str) -> str:
    """The stable `$id` of a schema file: a URN made of its path under `schemas/`."""
    return ID_PREFIX + path.removesuffix(".schema.json").replace("/", ":")


CHANGE_ID = schema_id(CHANGE_FILE)

CHANGE_BEYOND_SCHEMA = (
    "the fold: ids never reused, transitions only on active records, the dispatch shape fits the record kind, "
    "every/cron progression (acceptedAt >= target, occurrence and next order), the shared 300 s recurring gate, "
    "gate exhaustion at the end of the fold",
    "live validation of new appends: cron frequency (five minutes over the 400-year cycle), a matching date, "
    "a known and canonical time zone, targets and dispatches equal to the current calendar decision",
)


def object_schema(shape: ObjectShape) -> JsonSchema:
    """An object shape as JSON Schema: its properties, required keys, and closedness."""
    properties: dict[str, object] = {}
    for f in shape.fields:
        prop = dict(f.spec.schema())
        prop["description"] = f.description
        properties[f.name] = prop
    for key in shape.forbidden:
        properties[key] = False  # the key must be absent
    out: JsonSchema = {"type": "object", "title": shape.title, "description": shape.description}
    out["properties"] = properties
    out["required"] = list(shape.required)
    if shape.closed:
        out["additionalProperties"] = False
    return out


def _defs(shapes: Iterable[ObjectShape]) -> dict[str, object]:
    return {s.name: object_schema(s) for s in shapes}


def _document(
    path: str, title: str, description: str, beyond: Iterable[str], body: JsonSchema, defs: dict[str, object]
) -> JsonSchema:
    limits = list(beyond)
    text = description
    if limits:
        text += " Not expressible in JSON Schema (checked by schedlog): " + "; ".join(limits) + "."
    doc: JsonSchema = {"$schema": DIALECT, "$id": schema_id(path)}
    doc |= {"title": title, "description": text, **body}
    if defs:
        doc["$defs"] = defs
    return doc


PROFILE_CHANGE_FILES = {
    "after-only": "schedule-change.v1.after-only.schema.json",
    "fixed-rate": "schedule-change.v1.fixed-rate.schema.json",
    "fixed-rate-exact": "schedule-change.v1.fixed-rate-exact.schema.json",
}
"""The payload of each other profile's vocabulary (the calendar one is CHANGE_FILE)."""
PROFILE_BEYOND_SCHEMA = (
    "the fold: ids never reused, transitions only on active records, the dispatch shape fits the record kind, "
    "every progression (acceptedAt >= target, the next anchor-aligned target)",
)
PROFILE_TEXT = {
    "after-only": "after records and id-only dispatches (seed 001)",
    "fixed-rate": "after, at and every records, each with an optional title, id-only one-shot dispatches and "
    "every dispatches with acceptedAt (the released vocabulary, profiles.md §7)",
    "fixed-rate-exact": "after, at and every records with exact keys (no title), id-only one-shot dispatches and "
    "every dispatches with acceptedAt (the published @deepseek-ai/dsh-schedule@0.1.0-rc.8)",
}


def change_document(profile: str = "calendar") -> JsonSchema:
    """The payload schema of one profile's vocabulary: its record kinds (titled where it allows a
    title) and its dispatch shapes, rendered from the shapes the decoder checks."""
    prof = get_profile(profile)
    records = tuple((TITLED_RECORD_SHAPES if prof.record_title else RECORD_SHAPES)[k] for k in prof.record_kinds)
    dispatches = [DISPATCH_SHAPES[name] for name in prof.dispatch_shapes]
    refs = [create_shape(records), DELETE_SHAPE, *dispatches]
    body: JsonSchema = {"type": "object", "oneOf": [{"$ref": f"#/$defs/{s.name}"} for s in refs]}
    defs = _defs([*refs, *records])
    if prof.name == "calendar":
        return _document(
            CHANGE_FILE,
            "schedule/change payload, version 1",
            "The data of a schedule/change event: a create, a delete, or one of four dispatch shapes told apart "
            "by their exact keys. Optional means absent (null is not absent); integral numbers such as 30.0 are "
            "integers; strings are trimmed as JavaScript's trim() does.",
            CHANGE_BEYOND_SCHEMA,
            body,
            defs,
        )
    return _document(
        PROFILE_CHANGE_FILES[prof.name],
        f"schedule/change payload, version 1, {prof.name} profile",
        f"The data of a schedule/change event written in the {prof.name} vocabulary: {PROFILE_TEXT[prof.name]}. "
        "Optional means absent (null is not absent); integral numbers such as 30.0 are integers; strings are "
        "trimmed as JavaScript's trim() does.",
        PROFILE_BEYOND_SCHEMA,
        body,
        defs,
    )


def header_document() -> JsonSchema:
    shapes = (HEADER_SHAPE_V0, HEADER_SHAPE_V2)
    return _document(
        "session-header.schema.json",
        "session log header",
        "The first line of a session log of formats v0-v4, as the strict persistence reader accepts it: the v0/v1 "
        "header (seedLength, unknown keys dropped) or the v2-v4 header (isSeeded, exact keys). A version above "
        f"{CURRENT_FORMAT_VERSION} is a log schedlog cannot judge.",
        ("createdAt, delegationDepth and version are not negative zero (-0)", "cwd is an absolute path in a live log"),
        {"type": "object", "oneOf": [{"$ref": f"#/$defs/{s.name}"} for s in shapes]},
        _defs(shapes),
    )


EVENT_FILES = {
    "session-event.schema.json": (EVENT_SHAPE, "v0 and v1", REPLACE_OP),
    "session-event.v2.schema.json": (EVENT_SHAPE_V2, "v2", REPLACE_OP),
    "session-event.v3.schema.json": (EVENT_SHAPE_V3, "v3 and v4", REPLACE_OP_V3),
}


def event_document(path: str = "session-event.schema.json") -> JsonSchema:
    shape, versions, replace = EVENT_FILES[path]
    body = object_schema(shape)
    body["if"] = {"type": "object", "properties": {"type": {"const": "schedule/change"}}, "required": ["type"]}
    body["then"] = {"type": "object", "properties": {"data": {"$ref": CHANGE_ID}}}
    beyond = ["seq equals the event's index" + (" after packed rows are expanded" if shape is EVENT_SHAPE else "")]
    if shape is not EVENT_SHAPE:
        beyond.append("sourceEventSeqs names earlier seqs only, none twice")
    beyond.append("surface metadata rules (which types carry surfaceOp and sourceEventSeqs) are not checked")
    return _document(
        path,
        f"session log event (formats {versions})",
        f"One event line of a session log of formats {versions}; the data of a schedule/change event is a v1 "
        "change payload.",
        beyond,
        body,
        _defs([replace]),
    )


def row_document() -> JsonSchema:
    body = object_schema(ROW_SHAPE)
    body["allOf"] = [
        {
            "if": {"type": "object", "properties": {"type": {"const": tag}}, "required": ["type"]},
            "then": {"type": "object", "properties": {"data": {"$ref": f"#/$defs/{ROW_DATA_SHAPES[tag].name}"}}},
        }
        for tag in ROW_TAGS
    ]
    return _document(
        "chunk-row.schema.json",
        "packed chunk row",
        "A storage record of a session log standing for one or more consecutive assistant/chunk events.",
        (
            "dt holds exactly one gap fewer than there are members",
            "seq0 + members - 1 and every running time sum stay safe integers",
        ),
        body,
        _defs(dict.fromkeys(ROW_DATA_SHAPES.values())),
    )


def _one_of(names: Iterable[str]) -> list[object]:
    return [{"$ref": f"#/$defs/{n}"} for n in names]


_ERRORS = [s.name for s in ERROR_SHAPES]
_VIEWS = [s.name for s in VIEW_SHAPES.values()]


def tool_documents() -> dict[str, JsonSchema]:
    views = _defs(VIEW_SHAPES.values())
    errors = _defs(ERROR_SHAPES)
    view_union: JsonSchema = {"oneOf": _one_of(_VIEWS)}
    return {
        "tools/schedule_create.args.schema.json": _document(
            "tools/schedule_create.args.schema.json",
            "schedule_create arguments",
            CREATE_ARGS.description + " The host validates this; undeclared keys reach the tool.",
            ("exactly one selector; after_seconds / every_seconds are safe integers (see the README)",),
            object_schema(CREATE_ARGS),
            _defs([AT_LOCAL]),
        ),
        "tools/schedule_list.args.schema.json": _document(
            "tools/schedule_list.args.schema.json",
            "schedule_list arguments",
            LIST_ARGS.description,
            (),
            object_schema(LIST_ARGS),
            {},
        ),
        "tools/schedule_delete.args.schema.json": _document(
            "tools/schedule_delete.args.schema.json",
            "schedule_delete arguments",
            DELETE_ARGS.description,
            (),
            object_schema(DELETE_ARGS),
            {},
        ),
        "tools/schedule_view.schema.json": _document(
            "tools/schedule_view.schema.json",
            "schedule view",
            "An active record as schedule_create and schedule_list return it.",
            (),
            view_union,
            views,
        ),
        "tools/schedule_create.result.schema.json": _document(
            "tools/schedule_create.result.schema.json",
            "schedule_create result",
            "The new record's view, or an error value.",
            (),
            {"oneOf": [*_one_of(_VIEWS), *_one_of(_ERRORS)]},
            views | errors,
        ),
        "tools/schedule_list.result.schema.json": _document(
            "tools/schedule_list.result.schema.json",
            "schedule_list result",
            "Every active record's view in create order, or an error value.",
            (),
            {"oneOf": [{"type": "array", "items": view_union}, *_one_of(_ERRORS)]},
            views | errors,
        ),
        "tools/schedule_delete.result.schema.json": _document(
            "tools/schedule_delete.result.schema.json",
            "schedule_delete result",
            "Deleted, not found (nothing appended), or an error value.",
            (),
            {"oneOf": _one_of(["Deleted", "NotFound", *_ERRORS])},
            _defs([DELETED, NOT_FOUND]) | errors,
        ),
        "tools/schedule_error.schema.json": _document(
            "tools/schedule_error.schema.json",
            "schedule tool error",
            "The closed union of error values a management tool returns (errors are values, not failures).",
            (),
            {"oneOf": _one_of(_ERRORS)},
            errors,
        ),
    }


HOST_BEYOND_SCHEMA = (
    "a row's key equals its record's id",
    "lastDelivery equals the latest history record, and an empty history has none",
    "message ids are unique within a task",
    "a window holds start or end, and start is not after end",
    "weekdays ascend",
    "timeZone is a name ICU resolves (the stored spelling kept)",
    "a cron expression is in the Host grammar and spelled canonically (host.md §4.1)",
    "title is at most 120 UTF-16 code units (JSON Schema counts code points)",
)
HOST_SHAPES = (host.TASK, *host.RECORD_SHAPES.values(), host.RECEIPT, host.HISTORY_RECORD, host.HISTORY, host.WINDOW)


def host_documents() -> dict[str, JsonSchema]:
    """The Host task store (host.md §1-§4): one task, and the whole `schedule.json`."""
    task_ref: JsonSchema = {"$ref": f"#/$defs/{host.TASK.name}"}
    store: JsonSchema = {
        "type": "object",
        "properties": {
            "unit": {
                "type": "object",
                "description": "Other keys are read past.",
                "properties": {"name": {"const": "schedule"}, "version": {"type": "number", "const": 1}},
                "required": ["name", "version"],
            },
            "global": {"description": "Not read (the Host writes null)."},
            "tables": {
                "description": "An array passes the backend's object test and holds no tasks; "
                "other tables are read past.",
                "anyOf": [
                    {"type": "object", "properties": {"tasks": {"type": "object", "additionalProperties": task_ref}}},
                    {"type": "array"},
                ],
            },
        },
        "required": ["unit", "tables"],
    }
    return {
        "host/task.schema.json": _document(
            "host/task.schema.json",
            "Host task",
            "One row of the Host schedule service's `tasks` table: the record (six kinds), its session, "
            "status and deliveries. Strict: no other keys anywhere.",
            HOST_BEYOND_SCHEMA,
            task_ref,
            _defs(HOST_SHAPES),
        ),
        "host/record.schema.json": _document(
            "host/record.schema.json",
            "Host schedule record",
            "A Host schedule record of one of six kinds (after, at, every, daily, weekly, cron).",
            HOST_BEYOND_SCHEMA[4:],
            {"oneOf": [{"$ref": f"#/$defs/{shape.name}"} for shape in host.RECORD_SHAPES.values()]},
            _defs(host.RECORD_SHAPES.values()),
        ),
        "host/receipt.schema.json": _document(
            "host/receipt.schema.json",
            "Host delivery receipt",
            host.RECEIPT.description,
            (),
            object_schema(host.RECEIPT),
            {},
        ),
        "host/store.schema.json": _document(
            "host/store.schema.json",
            "Host task store (schedule.json)",
            "The JSON storage backend's file (host.md §1): unit schedule v1 and a table of tasks by id; "
            "the backend reads past other keys, global and other tables.",
            HOST_BEYOND_SCHEMA,
            store,
            _defs(HOST_SHAPES),
        ),
    }


SURFACE_FOLDERS = {HOST: "host/tools", SEED: "seed-002"}
SURFACE_BEYOND_SCHEMA = {
    HOST: (
        "the tool's own checks (schedule_create: no undeclared key and exactly one timing parameter; "
        "schedule_update: at most one, and some change; prompt and title non-empty after JavaScript trim(), "
        "a title at most 120 UTF-16 code units; after_seconds a positive safe integer; every_seconds a safe "
        "integer of at least 60; an id non-empty and trimmed)",
    ),
    SEED: (
        "the tool's own checks (a title non-empty after JavaScript trim() and at most 120 UTF-16 code units, "
        "a non-empty prompt, an rrule in schedlog's RFC 5545 subset; schedule_edit: an update changes one of "
        "title, prompt, rrule, target, active, a delete carries none of them)",
        "a page echoes its limit and offset, counts its items, lists active tasks first by next occurrence "
        "and keeps its active filter",
    ),
}


def surface_documents() -> dict[str, JsonSchema]:
    """The Host 1.0 tools' and seed 002's tools' arguments and results (host.md §7)."""
    out: dict[str, JsonSchema] = {}
    for surface, folder in SURFACE_FOLDERS.items():
        for tool in SURFACES[surface].values():
            args_path, result_path = (
                f"{folder}/{tool.name}.args.schema.json",
                f"{folder}/{tool.name}.result.schema.json",
            )
            out[args_path] = _document(
                args_path,
                f"{tool.name} arguments ({surface})",
                tool.params.description + " Undeclared keys pass the host and reach the tool.",
                SURFACE_BEYOND_SCHEMA[surface][:1],
                object_schema(tool.params),
                _defs(list(shapes_in(tool.params))[1:]),
            )
            out[result_path] = _document(
                result_path,
                f"{tool.name} result ({surface})",
                f"Every value {tool.name} returns (as the JSON text of one text block); error codes: "
                + ", ".join(tool.codes)
                + ".",
                SURFACE_BEYOND_SCHEMA[surface][1:],
                tool.result.schema(),
                _defs(shapes_in(tool.result)),
            )
    return out


def documents() -> dict[str, JsonSchema]:
    """Every schema file, by path under `schemas/`, in a stable order."""
    return {
        CHANGE_FILE: change_document(),
        **{path: change_document(profile) for profile, path in PROFILE_CHANGE_FILES.items()},
        "session-header.schema.json": header_document(),
        **{path: event_document(path) for path in EVENT_FILES},
        "chunk-row.schema.json": row_document(),
        **tool_documents(),
        **host_documents(),
        **surface_documents(),
    }
