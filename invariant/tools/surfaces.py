"""The three `schedule_*` tool surfaces, by name a session log may record (host.md §7, owner.md §3-§4).

- `session-local`: the reminder tools of the schedule/change era (owner.md; create, list,
  delete), views with `deliveryMode: "session-local"`.
- `host-1.0`: the shipped Host service's tools (dsh-schedule 0.2.x/1.0.x, `tools.ts` in public
  forks; create, list, delete, update): titled reminders of six kinds, views with
  `deliveryMode: "host"`, values rendered as `JSON.stringify` of the value.
- `seed-002`: seed 002's design (create, list, view, edit) over Host tasks, with an `rrule`
  (rrule.py) and a delivery `target`. No implementation exists; what the seed leaves open is
  schedlog's choice, written beside each shape.

Each tool's parameters are an open object (undeclared keys reach the body, as the host
validates), its output is a union of closed objects, and its own checks (`refusal`) run in the
order the shipped body runs them.
"""

from __future__ import annotations

from .host import HOST_TOOLS
from .local import LOCAL_TOOLS
from .model import Tool
from .names import SURFACE_NAMES
from .seed import SEED_TOOLS

SURFACES: dict[str, dict[str, Tool]] = {
    tools[0].surface: {t.name: t for t in tools} for tools in (LOCAL_TOOLS, HOST_TOOLS, SEED_TOOLS)
}
"""Every surface's tools by name, in the order a tie is broken."""
assert tuple(SURFACES) == SURFACE_NAMES
