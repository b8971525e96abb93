// The released scheduler, @deepseek-ai/dsh-schedule@0.1.0-rc.8 (the fixed-rate vocabulary),
// answering `schedlog conform`'s protocol (docs/conformance.md): the worked example of an
// adapter for host implementers in JavaScript, and schedlog's test oracle.
//
//   npm ci --legacy-peer-deps        # in this folder (package.json pins every package)
//   schedlog conform --exec "node adapter.mjs" --profile fixed-rate
//
// Every answer comes from the published functions: the decoder, the fold, the record
// creators behind the real `schedule_create` tool (registered with fake contexts and run with
// the request's clock, so its argument validator and selector checks answer too), the
// resolver, the framings, the view and the id allocation. The adapter only checks the
// protocol's own fields (`bad_request`) and translates errors to codes.
//
// Operations the published package has no counterpart for are answered `unsupported`:
// `cron` (no cron kind), `zone` (the zone canonicalizer is internal), `receipt` (no receipt
// function). `schedlog conform --profile fixed-rate` does not ask them.

import { createInterface } from 'node:readline'
import {
  ScheduleInputError,
  ScheduleLogError,
  allocateScheduleId,
  decodeScheduleChange,
  foldScheduleEvents,
  registerScheduleTools,
  renderEveryReminderBatchFraming,
  renderReminderFraming,
  resolveEveryOccurrence,
  scheduleView,
} from '@deepseek-ai/dsh-schedule'

const UTC_INSTANT = /^(?!0000)\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/

class BadRequest extends Error {}
class Unsupported extends Error {}

function field(request, name, fallback) {
  if (Object.hasOwn(request, name)) return request[name]
  if (arguments.length < 3) throw new BadRequest(`${name} is required`)
  return fallback
}

/** The package is the fixed-rate revision; `fixed-rate-exact` names its exact reading (no titles). */
function profile(request) {
  const name = field(request, 'profile', 'calendar')
  if (name !== 'fixed-rate' && name !== 'fixed-rate-exact') {
    throw new Unsupported(`this package implements the fixed-rate profile, not ${JSON.stringify(name)}`)
  }
}

function instant(request, name) {
  const text = field(request, name)
  const ms = typeof text === 'string' && UTC_INSTANT.test(text) ? Date.parse(text) : Number.NaN
  if (!Number.isFinite(ms) || new Date(ms).toISOString() !== text) throw new BadRequest(`${name} must be a canonical instant`)
  return ms
}

function events(request) {
  const value = field(request, 'events')
  if (!Array.isArray(value) || !value.every(e => typeof e === 'object' && e !== null && !Array.isArray(e))) {
    throw new BadRequest('events must be an array of objects')
  }
  return value
}

function seedLength(request) {
  return field(request, 'seedLength', 0)
}

/** A record, strictly: the package decodes records only inside a create payload. */
function record(value) {
  return decodeScheduleChange({ version: 1, operation: 'create', schedule: value }).schedule
}

function fold(request) {
  const folded = foldScheduleEvents(events(request), seedLength(request))
  return { active: folded.active, seenIds: folded.seenIds }
}

/** The real schedule_create tool, registered with fake contexts, run at `now`. */
async function create(request) {
  const args = field(request, 'args')
  const now = instant(request, 'now')
  const id = field(request, 'id', 'schedule-1')
  if (typeof id !== 'string') throw new BadRequest('id must be a string')
  const appended = []
  const session = { events: [], header: { seedLength: 0 }, append: (type, data) => appended.push({ type, data }) }
  const agent = { id: 'adapter', session }
  const rootCtx = { sessions: { flush: async () => true }, logger: { warn() {} } }
  const tools = {}
  const toolCtx = { tools: { register: tool => { tools[tool.name] = tool; return () => {} } } }
  registerScheduleTools(rootCtx, toolCtx, agent, () => {})
  const clock = Date.now
  Date.now = () => now
  let result
  try {
    result = await tools.schedule_create.execute(args, { agent, signal: new AbortController().signal })
  } catch (error) {
    if (error?.name === 'ToolArgsError') return { ok: false, code: 'invalid_arguments', message: error.message }
    throw error
  } finally {
    Date.now = clock
  }
  if (typeof result?.code === 'string') return { ok: false, code: result.code, message: result.message }
  const schedule = appended.find(e => e.type === 'schedule/change')?.data.schedule
  return { ok: true, schedule: { ...schedule, id } }
}

function resolve(request) {
  const schedule = record(field(request, 'schedule'))
  const accepted = instant(request, 'acceptedAt')
  if (schedule.kind !== 'every') throw new BadRequest('resolve takes an every schedule')
  const resolved = resolveEveryOccurrence(schedule, accepted)
  return { occurrenceAt: resolved.occurrenceAt, nextScheduledAt: resolved.nextScheduledAt ?? null }
}

function framing(request) {
  if (!Object.hasOwn(request, 'batch')) return { text: renderReminderFraming(record(field(request, 'schedule'))) }
  const batch = request.batch
  if (!Array.isArray(batch)) throw new BadRequest('batch must be an array')
  const reminders = batch.map(member => {
    if (typeof member !== 'object' || member === null || typeof member.occurrenceAt !== 'string') {
      throw new BadRequest('each batch member has a schedule and an occurrenceAt string')
    }
    return { record: record(field(member, 'schedule')), occurrenceAt: member.occurrenceAt }
  })
  return { text: renderEveryReminderBatchFraming(reminders) }
}

function view(request) {
  const schedule = record(field(request, 'schedule'))
  return { view: scheduleView(schedule, instant(request, 'now')) }
}

const OPERATIONS = {
  decode: request => ({ change: decodeScheduleChange(field(request, 'change')) }),
  fold,
  check: request => {
    const candidate = { type: 'schedule/change', seq: events(request).length, time: 0, data: field(request, 'candidate') }
    return fold({ ...request, events: [...events(request), candidate] })
  },
  create,
  resolve,
  framing,
  view,
  allocate: request => ({ id: allocateScheduleId(foldScheduleEvents(events(request), seedLength(request))) }),
}

async function answer(request) {
  try {
    if (typeof request !== 'object' || request === null || Array.isArray(request)) throw new BadRequest('a request is a JSON object')
    const operation = OPERATIONS[request.op]
    if (operation === undefined) throw new Unsupported(`no counterpart for op ${JSON.stringify(request.op)}`)
    profile(request)
    const result = await operation(request)
    return 'ok' in result ? result : { ok: true, ...result }
  } catch (error) {
    if (error instanceof ScheduleLogError) return { ok: false, code: 'corrupt_schedule_log', message: error.message }
    if (error instanceof ScheduleInputError) return { ok: false, code: error.code, message: error.message }
    if (error instanceof BadRequest) return { ok: false, code: 'bad_request', message: error.message }
    if (error instanceof Unsupported) return { ok: false, code: 'unsupported', message: error.message }
    return { ok: false, code: 'internal_error', message: String(error?.stack ?? error) }
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })
for await (const line of lines) {
  let request
  try {
    request = JSON.parse(line)
  } catch {
    process.stdout.write(`${JSON.stringify({ tag: null, ok: false, code: 'bad_request', message: 'not JSON' })}\n`)
    continue
  }
  const tag = typeof request === 'object' && request !== null ? request.tag : undefined
  const reply = await answer(request)
  process.stdout.write(`${JSON.stringify({ tag, ...reply })}\n`)
}
