// Load JSONL session logs through the published persistence reader's own read path
// (@deepseek-ai/dsh-session-persistence@0.1.0-rc.8: `PersistenceCoordinator.prepareCore`, the
// cold load a resume makes), with an in-memory backend handing it each log's header and events
// (packed chunk rows expanded by dsh-session's own decoder, the committed prefix as given: the
// caller writes whole logs). It answers what the reader says: loaded (the events it kept), or
// refused, by its error's name (SessionFormatUnsupportedError: the unknown-event guard or the
// version; SessionPersistenceCorruptionError: the session layer's validation) and message. A log
// loaded is then folded by the published schedule fold (@deepseek-ai/dsh-schedule@0.1.0-rc.8,
// `foldScheduleEvents` over the events and the header's seedLength): `active`, the ids of the
// active records, or `foldError`, the rule its ScheduleLogError names.
// Usage: node load-session.mjs LOG.jsonl...   (prints one JSON line per log)
import { readFileSync } from 'node:fs'
import { Context } from '@deepseek-ai/cordis'
import { SessionStore, decodeStorageRecord } from '@deepseek-ai/dsh-session'
import { PersistenceCoordinator } from '@deepseek-ai/dsh-session-persistence'
import { foldScheduleEvents } from '@deepseek-ai/dsh-schedule'

const ctx = new Context()
ctx.plugin(SessionStore)
for (let tries = 0; !ctx.sessions; tries++) {
  if (tries > 1000) throw new Error('the session store never started')
  await new Promise((resolve) => setTimeout(resolve, 1)) // (a plugin starts on a later tick)
}
for (const log of process.argv.slice(2)) {
  const [first, ...lines] = readFileSync(log, 'utf8').split('\n').filter((line) => line !== '')
  const { type, ...meta } = JSON.parse(first)
  let answer
  try {
    const events = lines.flatMap((line) => decodeStorageRecord(JSON.parse(line)))
    const backend = { loadStored: async () => ({ meta, events, revision: 1, tornMarker: undefined }) }
    const loaded = await new PersistenceCoordinator(ctx, backend).prepareCore(meta.id)
    answer = { loaded: loaded.sessionLength }
    try {
      answer.active = foldScheduleEvents(events, meta.seedLength ?? 0).active.map((record) => record.id)
    } catch (error) {
      answer.foldError = error.rule ?? error.message
    }
  } catch (error) {
    answer = { refused: error.name, message: error.message }
  }
  process.stdout.write(JSON.stringify(answer) + '\n')
}
process.exit(0)
