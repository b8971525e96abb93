"""Judging one session: the streaming judge fed each record as read (judge, fastchanges,
telling, transcript), a session's verdict and report (verify, report, verdicts), the rule table
(rules), a report as the text output tells it and as a run holds it (textline, held), and a
Host task store and its cross-check with the logs beside it (hoststore).

Imports the reader (`replay.logs`) and below; knows no cache, no worker and no command."""
