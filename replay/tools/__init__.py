"""The per-log tools beside the verdict: a session's story (explain) and its picture data for
`schedlog report` (sessionview), a log cut down for a bug report (shrink), a refused session
given back with its refused events set aside (repair; both hold the log whole: plaintext), a
candidate event checked against a log (candidate, `schedlog check`), a cron rule described
(cronreport).

Imports the audit, the cache, the judge and below."""
