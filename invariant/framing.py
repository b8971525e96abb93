"""The two model-facing reminder texts (protocol.md §5.5); exact bytes matter.

Lines are joined with LF and there is no trailing newline. Ids and prompts are JSON-escaped
as `JSON.stringify` does, so a prompt can never forge a framing line.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

from .changes import Record
from .instant import parse_instant
from .jsvalue import js_string
from .profiles import Profile, get_profile


class BatchItem(NamedTuple):
    """One member of a recurring batch: the record and the occurrence decided for it."""

    record: Record
    occurrence_at: str


def render_framing(record: Record, profile: str | Profile = "calendar") -> str:
    """The one-shot reminder message for an `after`/`at` record."""
    return "\n".join(
        (
            "[SCHEDULE REMINDER]",
            get_profile(profile).one_shot_instruction,
            f"schedule_id_json: {js_string(record.id)}",
            f"occurrence_at: {record.scheduled_at}",
            f"reminder_prompt_json: {js_string(record.prompt)}",
        )
    )


def render_batch_framing(items: Sequence[BatchItem | tuple[Record, str]], profile: str | Profile = "calendar") -> str:
    """The recurring batch message; `items` in batch order (target, then create order), with
    the profile's instruction line. An empty batch renders an empty `reminders_json` array."""
    members = []
    for record, occurrence in items:
        head, tail = _member_parts(record.id, record.prompt)
        # a canonical instant needs no escaping (and would only crowd js_string's memory)
        quoted = f'"{occurrence}"' if parse_instant(occurrence) is not None else js_string(occurrence)
        members.append(head + quoted + tail)
    reminders = ",".join(members)
    instruction = get_profile(profile).batch_instruction
    return "\n".join(("[SCHEDULE REMINDER BATCH]", instruction, f"reminders_json: [{reminders}]"))


@lru_cache(maxsize=4096)
def _member_parts(schedule_id: str, prompt: str) -> tuple[str, str]:
    """A batch member's JSON before and after its occurrence. Remembered: the same records
    recur batch after batch, and only the occurrence changes."""
    return (
        f'{{"schedule_id":{js_string(schedule_id)},"occurrence_at":',
        f',"reminder_prompt":{js_string(prompt)}}}',
    )
