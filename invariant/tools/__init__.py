"""The `schedule_*` tool surfaces a session log may record, and the judge of logged calls.

- model.py: what a tool surface is (`Tool`: parameters, values, error codes, own checks) and
  the parts the surfaces share;
- names.py: the surfaces' names (light, for command-line choices);
- local.py, host.py, seed.py: one module per surface (the session-local tools of owner.md, the
  shipped Host 1.0 tools, seed 002's design);
- surfaces.py: every surface's tools by name;
- judge.py: logged calls and results judged against the surfaces (transcripts).
"""
