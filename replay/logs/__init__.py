"""Reading a session log's bytes into records as the harness loads them: framing and committed
lines (frames, committed, notes), the header and its format version (header), the events and
their envelopes (records, envelope, fastpath, fastruns, loadfast), the reading state saved for
a resumed read (readstate), and the one reader every command opens (logfile.SessionLog).

Imports `replay.sources` (where the bytes come from) and `replay.lines` (their text); knows
nothing of verdicts (the judge hands it a selector of the events it wants)."""
