// Write JSONL session logs into a layout-14 SQLite session store through the published backend's
// own API (@deepseek-ai/dsh-session-persistence-sqlite@0.0.1-rc.1, on node:sqlite): each session
// created, then its logical events (packed chunk rows expanded by dsh-session's own decoder)
// appended BATCH at a time, each batch one transaction, as the live write path commits them.
// schedlog's tests read the stores it writes (tests/test_sqlite_writer.py).
// Usage: node write-store.mjs STORE.db BATCH LOG.jsonl... (prints the session ids as JSON)
import { readFileSync } from 'node:fs'
import { Context } from '@deepseek-ai/cordis'
import { SessionStore, decodeStorageRecord } from '@deepseek-ai/dsh-session'
import { SessionPersistenceSqlite } from '@deepseek-ai/dsh-session-persistence-sqlite'

const [store, batchText, ...logs] = process.argv.slice(2)
const batch = Number(batchText)
const ctx = new Context()
ctx.plugin(SessionStore)
const backend = ctx.plugin(SessionPersistenceSqlite, { path: store, journalMode: 'wal' })
for (let tries = 0; !ctx.sessionPersistence; tries++) {
  if (tries > 1000) throw new Error('the SQLite backend never started')
  await new Promise((resolve) => setTimeout(resolve, 1)) // (a plugin starts on a later tick)
}
const persistence = ctx.sessionPersistence
const written = []
for (const log of logs) {
  const [first, ...lines] = readFileSync(log, 'utf8').split('\n').filter((line) => line.trim())
  const { type, ...meta } = JSON.parse(first)
  const events = lines.flatMap((line) => decodeStorageRecord(JSON.parse(line)))
  await persistence.create(meta)
  for (let at = 0; at < events.length; at += batch) await persistence.append(meta.id, events.slice(at, at + batch))
  written.push(meta.id)
}
await backend.dispose() // (the database closed: its -wal checkpointed, as a clean shutdown leaves it)
process.stdout.write(JSON.stringify(written) + '\n')
