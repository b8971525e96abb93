"""Where a session log's bytes come from, and the names that find them: files (plain, zstd
frames), streams, object-store URLs (objects, fsspec), SQLite session stores (sqlitestore:
a session's rows as the JSONL lines the harness would write, storerows; sqlitenames), and the
walks that find logs under folders, prefixes and stores (discover, names). `bytesource` is the
interface a new input kind plugs into: a source of bytes with its identity (size, mtime, tag);
`inputs` tells the kinds apart once, for every command.

Imports `replay.lines` (a store's rows are JSON text) and below; never the reader or the judge."""
