"""The verdict cache (issue 50): a re-audit reads only what changed since the last.

`store.py` keeps the entries (one SQLite file in the cache folder); `verdicts.py` decides, for a
log, whether its cached report stands (the same bytes), whether its saved reading is resumed (it
grew), or whether it is read whole (anything else).
"""
