// The released live owner, @deepseek-ai/dsh-schedule@0.1.0-rc.8, run on owner-scenarios.jsonl
// scenarios (owner.md §0) outside its harness: schedlog's oracle for `simulate --profile
// fixed-rate`, and a worked example of driving the published runtime.
//
//   node owner-driver.mjs < scenarios.jsonl     # one JSON object out per scenario in
//
// Each output line is {"name", "appended", "followups", "results", "trace"} (owner.md §0.2), or
// {"name", "error"} when the scenario cannot be run.
//
// What is real: the plugin's `apply(ctx)`, so its ScheduleRuntime (the live owner), its three
// tools (each registered through `defineTool`, whose argument validation runs), its transaction
// queue, fold, decisions, framings and appends. What is faked, as owner.md §7 models it:
//   * the cordis context: `agents` (roots, get, withoutInitiator), `sessions.flush` (outcomes
//     from `flush_outcomes`, default ok), a logger that keeps the warnings;
//   * the agent: an in-memory session (events, header, append), `runMaintenance` (refused
//     synchronously while busy; a claim runs its task at once), `followup`, `whenIdle`, and its
//     scoped context (tool registry, effects, `agent/status` listeners);
//   * time: `Date.now` reads a virtual wall clock and `setTimeout`/`clearTimeout` arm virtual
//     timers on a virtual monotonic clock; nothing sleeps;
//   * `fail_framing`: a module hook wraps the `createUserMessage` the package imports, so the
//     next n reminder messages fail to build;
//   * `drive`: the runtime is not exported; its only public trigger without a side effect is
//     the `agent/status` idle listener, which drives when the log holds a `schedule/change`, so
//     the log answers that one question "yes" while the listener is called;
//   * cancellation: the call's signal is aborted right after the call is issued, and a value
//     the body returns under an aborted signal becomes `$aborted` (the host's replacement).
// Node 20 lacks `Promise.withResolvers` (the runtime uses it): it is supplied when missing.

import { register } from 'node:module'
import { createInterface } from 'node:readline'

Promise.withResolvers ??= function withResolvers() {
  let resolve
  let reject
  const promise = new this((yes, no) => {
    resolve = yes
    reject = no
  })
  return { promise, resolve, reject }
}

const HOOKS = `
export async function resolve(specifier, context, next) {
  const found = await next(specifier, context)
  if (specifier !== '@deepseek-ai/dsh-llm' || !context.parentURL?.includes('/dsh-schedule/')) return found
  const real = JSON.stringify(found.url)
  const shim = 'import * as real from ' + real + '; export * from ' + real + ';' +
    'export function createUserMessage(input) {' +
    '  const faults = globalThis.__scheduleFramingFaults;' +
    '  if (faults !== undefined && faults.count > 0) { faults.count -= 1; throw new Error("injected framing failure") }' +
    '  return real.createUserMessage(input) }'
  return { url: 'data:text/javascript,' + encodeURIComponent(shim), shortCircuit: true }
}`
register(`data:text/javascript,${encodeURIComponent(HOOKS)}`)
const { apply, registerScheduleTools } = await import('@deepseek-ai/dsh-schedule')

const framingFaults = { count: 0 }
globalThis.__scheduleFramingFaults = framingFaults

const ABORTED = { $aborted: true }
const UNAVAILABLE = { $unavailable: true }
const INVALID_ARGUMENTS = { $invalid_arguments: true }
const TOOLS = { create: 'schedule_create', list: 'schedule_list', delete: 'schedule_delete' }
const instant = ms => new Date(ms).toISOString()

/** Let every queued microtask run (nothing here waits on I/O, so one turn reaches quiescence). */
const quiescence = () => new Promise(done => setImmediate(done))

/** The session log: `some` can be told to answer true (the explicit `drive`, see above). */
class EventLog extends Array {
  static get [Symbol.species]() {
    return Array
  }

  forced = false

  some(predicate, self) {
    return this.forced || super.some(predicate, self)
  }
}

class World {
  constructor(scenario) {
    this.wall = Date.parse(scenario.start)
    this.monotonic = 0
    this.timers = new Map()
    this.nextTimer = 1
    this.events = new EventLog()
    this.header = { type: 'session' }
    this.durable = 0
    this.faults = { flush: [], followup: 0, maintenance: 0, append: {}, onClaimJump: undefined, onClaimLog: undefined }
    this.busy = false
    this.claimOpen = false
    this.idleWaiters = []
    this.appended = []
    this.followups = []
    this.results = []
    this.trace = []
    this.warnings = []
    this.agent = undefined
    this.published = false
    this.tools = new Map()
    this.statusListeners = new Set()
    this.cleanup = undefined
    this.created = []
    framingFaults.count = 0
    const world = this
    this.ctx = {
      effect(body) {
        return body()
      },
      on(name, listener) {
        if (name !== 'agent/created') throw new Error(`unexpected root event ${name}`)
        world.created.push(listener)
        return () => world.created.splice(world.created.indexOf(listener), 1)
      },
      agents: {
        roots: () => (world.published ? [world.agent] : []),
        get: id => (world.published && world.agent.id === id ? world.agent : undefined),
        withoutInitiator: body => body(),
      },
      sessions: { flush: async () => world.flush() },
      logger: { warn: message => world.warnings.push(message) },
    }
    apply(this.ctx)
  }

  effect(effect, fields = {}) {
    this.trace.push({ at: instant(this.wall), effect, ...fields })
  }

  // --- time ------------------------------------------------------------------------------------

  installClock() {
    Date.now = () => this.wall
    globalThis.setTimeout = (callback, delay) => {
      const id = this.nextTimer++
      this.timers.set(id, { deadline: this.monotonic + Math.max(0, delay), callback })
      return id
    }
    globalThis.clearTimeout = id => {
      this.timers.delete(id)
    }
  }

  elapse(ms) {
    this.wall += ms
    this.monotonic += ms
  }

  nextDue(limit) {
    let found
    for (const [id, timer] of this.timers) {
      if (timer.deadline <= limit && (found === undefined || timer.deadline < found[1].deadline)) found = [id, timer]
    }
    return found
  }

  async advanceTo(at) {
    for (;;) {
      const due = this.nextDue(this.monotonic + (at - this.wall))
      if (due === undefined) break
      this.elapse(due[1].deadline - this.monotonic)
      this.timers.delete(due[0])
      due[1].callback()
      await quiescence()
    }
    this.elapse(at - this.wall)
  }

  // --- the session and persistence ---------------------------------------------------------------

  logEvent(type, data) {
    const durable = this.durable === this.events.length
    this.events.push({ type, seq: this.events.length, time: this.wall, data })
    if (durable) this.durable = this.events.length
  }

  append(type, data) {
    const operation = data?.operation
    if ((this.faults.append[operation] ?? 0) > 0) {
      this.faults.append[operation] -= 1
      this.effect('append_rejected', { change: data })
      throw new Error('injected append failure')
    }
    this.events.push({ type, seq: this.events.length, time: this.wall, data })
    this.appended.push(data)
    this.effect('append', { index: this.appended.length - 1 })
  }

  flush() {
    const outcome = this.faults.flush.length > 0 ? this.faults.flush.shift() : 'ok'
    this.effect('flush', { outcome })
    if (outcome === 'reject') throw new Error('injected listener failure')
    if (outcome === 'ok') this.durable = this.events.length
    return outcome === 'ok'
  }

  // --- the agent -------------------------------------------------------------------------------

  makeAgent() {
    const world = this
    const session = {
      events: this.events,
      header: this.header,
      append: (type, data) => world.append(type, data),
    }
    const agent = {
      id: 'root',
      session,
      ctx: {
        tools: {
          register(tool) {
            world.tools.set(tool.name, tool)
            return () => {
              if (world.tools.get(tool.name) === tool) world.tools.delete(tool.name)
            }
          },
        },
        effect: body => {
          world.cleanup = body()
          return world.cleanup
        },
        on(name, listener) {
          if (name !== 'agent/status') throw new Error(`unexpected agent event ${name}`)
          world.statusListeners.add(listener)
          return () => world.statusListeners.delete(listener)
        },
      },
      runMaintenance: task => world.runMaintenance(task),
      followup: message => world.followup(message),
      whenIdle: () => world.whenIdle(),
    }
    return agent
  }

  runMaintenance(task) {
    if (this.busy || this.claimOpen) {
      this.effect('claim', { outcome: 'busy' })
      throw new Error('the agent is busy')
    }
    if (this.faults.maintenance > 0) {
      this.faults.maintenance -= 1
      this.effect('claim', { outcome: 'rejected' })
      return Promise.reject(new Error('injected maintenance rejection'))
    }
    this.effect('claim', { outcome: 'claimed' })
    this.claimOpen = true
    try {
      if (this.faults.onClaimJump !== undefined) {
        this.wall = this.faults.onClaimJump
        this.faults.onClaimJump = undefined
      }
      if (this.faults.onClaimLog !== undefined) {
        this.logEvent('schedule/change', this.faults.onClaimLog)
        this.faults.onClaimLog = undefined
      }
      return task()
    } finally {
      this.claimOpen = false
      this.effect('release')
    }
  }

  followup(message) {
    if (this.faults.followup > 0) {
      this.faults.followup -= 1
      this.effect('followup_rejected')
      throw new Error('injected followup failure')
    }
    const { content, source, role } = message
    if (role !== 'user' || source?.kind !== 'plugin' || source?.plugin !== 'schedule' || content.length !== 1) {
      throw new Error(`unexpected reminder message ${JSON.stringify(message)}`)
    }
    this.followups.push(content[0].text)
    this.effect('followup', { index: this.followups.length - 1 })
  }

  whenIdle() {
    this.effect('wait_idle')
    if (!this.busy) return Promise.resolve()
    const { promise, resolve, reject } = Promise.withResolvers()
    this.idleWaiters.push({ resolve, reject })
    return promise
  }

  settleIdleWaiters(ok) {
    const waiters = this.idleWaiters.splice(0)
    for (const waiter of waiters) {
      if (ok) waiter.resolve()
      else waiter.reject(new Error('injected idle wait failure'))
    }
  }

  // --- lifecycle ---------------------------------------------------------------------------------

  start(withOwner) {
    this.agent = this.makeAgent()
    this.published = true
    if (withOwner) {
      for (const listener of [...this.created]) listener({ agent: this.agent })
    } else {
      const dispose = registerScheduleTools(this.ctx, this.agent.ctx, this.agent, () => {})
      this.cleanup = () => dispose()
    }
  }

  dispose() {
    this.published = false
    const cleanup = this.cleanup
    this.cleanup = undefined
    if (cleanup !== undefined) cleanup()
  }

  // --- management calls --------------------------------------------------------------------------

  call(verb, args, cancelled) {
    const slot = this.results.length
    this.results.push(null)
    const tool = this.tools.get(TOOLS[verb])
    if (tool === undefined) {
      this.results[slot] = UNAVAILABLE
      return
    }
    const controller = new AbortController()
    const pending = tool.execute(args, { agent: this.agent, signal: controller.signal })
    if (cancelled) controller.abort()
    pending.then(
      value => {
        this.results[slot] = controller.signal.aborted ? ABORTED : value
      },
      error => {
        this.results[slot] = error?.name === 'ToolArgsError' ? INVALID_ARGUMENTS : { $thrown: String(error) }
      },
    )
  }

  // --- one step ----------------------------------------------------------------------------------

  async step(step) {
    const at = Date.parse(step.at)
    if (at < this.wall) throw new Error(`step at ${step.at} is earlier than the wall clock`)
    await this.advanceTo(at)
    this.apply(step.do, step.args ?? {}, step.cancelled === true)
    await quiescence()
  }

  apply(verb, args, cancelled) {
    const faults = this.faults
    switch (verb) {
      case 'start':
        this.start(args.owner !== false)
        break
      case 'create':
      case 'list':
      case 'delete':
        this.call(verb, args, cancelled)
        break
      case 'parallel':
        for (const call of args.calls ?? []) this.call(call.do, call.args ?? {}, call.cancelled === true)
        break
      case 'advance':
        break
      case 'jump':
        this.wall = Date.parse(args.to)
        break
      case 'busy':
        this.busy = true
        break
      case 'idle':
        if (this.busy) {
          this.busy = false
          for (const listener of [...this.statusListeners]) listener({ status: 'idle' })
        }
        this.settleIdleWaiters(true)
        break
      case 'idle_wait_fails':
        this.settleIdleWaiters(false)
        break
      case 'drive':
        this.events.forced = true
        try {
          for (const listener of [...this.statusListeners]) listener({ status: 'idle' })
        } finally {
          this.events.forced = false
        }
        break
      case 'log':
        this.logEvent(args.type ?? 'schedule/change', args.data)
        break
      case 'fork':
        this.header.seedLength = this.events.length
        break
      case 'flush_outcomes':
        faults.flush.push(...(args.outcomes ?? []))
        break
      case 'fail_followup':
        faults.followup += args.times ?? 1
        break
      case 'fail_framing':
        framingFaults.count += args.times ?? 1
        break
      case 'fail_append':
        faults.append[args.operation] = (faults.append[args.operation] ?? 0) + (args.times ?? 1)
        break
      case 'fail_maintenance':
        faults.maintenance += args.times ?? 1
        break
      case 'calendar_fails':
        break // the fixed-rate vocabulary evaluates no calendar
      case 'on_claim_jump':
        faults.onClaimJump = Date.parse(args.to)
        break
      case 'on_claim_log':
        faults.onClaimLog = args.data
        break
      case 'dispose':
        this.dispose()
        break
      case 'restart':
        this.dispose()
        if (args.lose_unflushed) this.events.splice(this.durable)
        this.busy = false
        this.claimOpen = false
        this.start(true)
        break
      default:
        throw new Error(`unknown verb ${JSON.stringify(verb)}`)
    }
  }

  observables() {
    const { appended, followups, results, trace } = this
    return { appended, followups, results, trace }
  }
}

const realNow = Date.now
const realSetTimeout = globalThis.setTimeout
const realClearTimeout = globalThis.clearTimeout

async function run(scenario) {
  const world = new World(scenario)
  world.installClock()
  try {
    for (const step of scenario.steps) await world.step(step)
    world.dispose()
    await quiescence()
  } finally {
    Date.now = realNow
    globalThis.setTimeout = realSetTimeout
    globalThis.clearTimeout = realClearTimeout
  }
  return world.observables()
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })
for await (const line of lines) {
  if (line.trim() === '') continue
  let name = null
  let reply
  try {
    const scenario = JSON.parse(line)
    name = scenario.name ?? null
    reply = { name, ...(await run(scenario)) }
  } catch (error) {
    reply = { name, error: String(error?.stack ?? error) }
  }
  process.stdout.write(`${JSON.stringify(reply)}\n`)
}
