// The reference's own load of a corpus, timed: what the harness does to read a session log and
// derive its reminders, from the released packages (issue 30's yardstick). For each log: the
// file read, split into lines, each line after the header `JSON.parse`d, packed rows expanded
// by the session package's `decodeStorageRecord`, and the whole log folded by the schedule
// package's `foldScheduleEvents` under the header's `seedLength`. Beside it, `JSON.parse` of
// every line alone, Node's own floor.
//
//   node reference_load.mjs LIST [RUNS]     # run in the folder holding the packages
//
// LIST is a file naming one log a line (format v0 or v1: the fork cut is the header's
// seedLength). After one unmeasured pass of each (V8 compiles the hot functions), RUNS times
// (default 1): one line of JSON, {"load": s, "parse": s} in CPU seconds of this process (every
// thread), and last {"counts": [[events, scheduleChanges, active], ...]}, a log each, so the
// caller can check that this read what it read.

import { readFileSync } from 'node:fs'
import { foldScheduleEvents } from '@deepseek-ai/dsh-schedule'
import { decodeStorageRecord } from 'dsh-session-chunks'

const paths = readFileSync(process.argv[2], 'utf8').split('\n').filter(Boolean)
const runs = Number(process.argv[3] ?? 1)

function lines(path) {
  const text = readFileSync(path, 'utf8')
  return text.split('\n')
}

function load(path) {
  const [first, ...rest] = lines(path)
  const header = JSON.parse(first)
  if (typeof header.version === 'number' && header.version >= 2) {
    throw new Error(`${path}: format v${header.version}; this load reads v0 and v1 (the cut is seedLength)`)
  }
  const events = []
  for (const line of rest) {
    if (line === '') continue
    for (const event of decodeStorageRecord(JSON.parse(line))) events.push(event)
  }
  return [events, foldScheduleEvents(events, header.seedLength)]
}

function parse(path) {
  let parsed = 0
  for (const line of lines(path)) {
    if (line !== '') {
      JSON.parse(line)
      parsed++
    }
  }
  return parsed
}

function cpu(each) {
  const start = process.cpuUsage()
  for (const path of paths) each(path)
  const spent = process.cpuUsage(start)
  return (spent.user + spent.system) / 1e6
}

cpu(load)
cpu(parse)
for (let run = 0; run < runs; run++) {
  console.log(JSON.stringify({ load: cpu(load), parse: cpu(parse) }))
}
const counts = paths.map(path => {
  const [events, folded] = load(path)
  return [events.length, events.filter(e => e.type === 'schedule/change').length, folded.active.length]
})
console.log(JSON.stringify({ counts }))
