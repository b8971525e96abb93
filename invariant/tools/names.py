"""The names of the three tool surfaces (the surfaces of local.py, host.py and seed.py carry them), light enough
for a command line to offer as choices without building the surfaces."""

from __future__ import annotations

LOCAL = "session-local"
"""The session-local tools of owner.md (every revision of the plugin)."""
HOST = "host-1.0"
"""The shipped Host 1.0 task tools (host.md)."""
SEED = "seed-002"
"""Seed 002's designed tools."""
SURFACE_NAMES = (LOCAL, HOST, SEED)
"""In the order a tie is broken."""
SEED_TARGETS = ("this_session", "new_once", "new")
"""Seed 002's delivery targets (a call naming one points to its surface)."""
