"""The text of a log line as JavaScript reads it: `JSON.parse` at any depth, numbers past the
doubles and lone surrogates included (deepjson), one line parsed with the failure it shows
(jsonline), and the v0/v1 packed chunk rows decoded into their events (chunks).

Owns no input and no judgement: every room that reads a line's text imports it. Imports only
`invariant` and the shared modules at replay's top."""
