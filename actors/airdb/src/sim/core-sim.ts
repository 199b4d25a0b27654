/**
 * The simulator of AirDB's client core (src/core/client-core.ts): several processes, each running a ClientCore
 * and a list-append workload, over a model of shared storage (the command log, the state log and snapshots),
 * all driven by one seeded discrete-event loop with no Effect runtime and no real time. The world plays the
 * shell: it performs each effect as a storage call with a drawn latency (so answers reorder), fails some
 * before they happen, makes some ambiguous (done, but the client hears a timeout; an ambiguous append may even
 * land after that), stalls storage (every call waits), pauses processes (SIGSTOP: nothing in or out) and
 * crashes them (a restart is a new incarnation that starts cold from storage). Snapshots are written by the
 * client the core says has the duty, and published on the state log if the chain still ends where they start.
 *
 * After the run it checks: no acknowledged commit lost and none duplicated (against a replay of the log),
 * every live client's state = the log's replay at its tail, the timely bound on every entry that landed, and
 * the history (Elle list-append) strictly serializable. A seed replays exactly.
 */
import { PCGRandom } from "effect/Utils"
import { type Chain, chainEnd, extendChain } from "../core/chain.js"
import { ClientCore, type CoreEffect, type CoreInput, type CoreReply } from "../core/client-core.js"
import type { CoreVariant } from "../core/client-state.js"
import { emptyStateView, type StateRecord, type StoreConfig } from "../core/coordination.js"
import { CommandReplay } from "../core/replay.js"
import { maxPendingEntries } from "../core/timely.js"
import type { CommandEntry, Intention, Key, KeyState, Outcome, Write } from "../core/types.js"
import { checkListAppend, type MicroOp, type Txn } from "./elle.js"
import { decodeList, encodeList } from "./list-append.js"
import type { FaultWindows, Violation } from "./sim-storage.js"
import { TimedHeap } from "./timed-heap.js"

export interface CoreSimOptions {
  readonly clients: number
  readonly txnsPerClient: number
  readonly keys: number
  /** Share of a transaction's operations that are reads (the rest append). */
  readonly readShare: number
  /** Share of transactions that are one `Get` instead. */
  readonly getShare: number
  /** Simulated milliseconds a storage call takes, drawn uniformly. */
  readonly delayMs: readonly [number, number]
  /** Probability that a call fails before it happens. */
  readonly failBefore: number
  /** Probability that a call happens but its client hears a timeout. */
  readonly ambiguous: number
  /** Of the ambiguous appends, the share that land after the client heard the timeout. */
  readonly lateLanding: number
  /** A process is killed every so often (then restarted as a new incarnation). */
  readonly crashes?: FaultWindows
  /** A process stops (SIGSTOP) every so often. */
  readonly pauses?: FaultWindows
  /** Storage stops answering every so often (every call waits until it resumes). */
  readonly stalls?: FaultWindows
  readonly store: StoreConfig
  readonly variant: CoreVariant
  /** Simulated time after which an unfinished workload is a liveness violation. */
  readonly limitMs: number
}

export interface CoreSimStats {
  readonly txns: number
  readonly committed: number
  readonly aborted: number
  readonly unknown: number
  readonly entries: number
  readonly snapshots: number
  readonly adoptions: number
  readonly crashes: number
  readonly pauses: number
  readonly stalls: number
  readonly ambiguousCalls: number
  readonly failedCalls: number
  readonly simulatedMs: number
}

export interface CoreSimReport {
  readonly seed: number
  readonly violation: Violation | undefined
  readonly stats: CoreSimStats
}

const MAX_ATTEMPTS = 8

interface Event {
  readonly at: number
  readonly run: () => void
}

interface Proc {
  readonly p: number
  incarnation: number
  writer: string
  core: ClientCore | undefined
  pausedUntil: number
  nextId: number
  readonly callbacks: Map<number, (reply: CoreReply) => void>
  /** State-log records this incarnation has been handed. */
  stateCursor: number
  stateSyncing: boolean
  stateSyncAgain: boolean
  stateWaiters: Array<() => void>
  snapshotting: boolean
  done: number
  txSeq: number
  current: { readonly id: number; readonly invokedAt: number; readonly planned: ReadonlyArray<MicroOp> } | undefined
  /** Each history transaction's intentions, as writer/tx. */
  readonly attempts: Map<number, Array<string>>
}

/** The key's state in a chain's snapshots (the newest that holds it). */
const lookupIn = (snapshots: ReadonlyMap<string, ReadonlyMap<Key, KeyState>>, chain: Chain, key: Key) => {
  for (let i = chain.snapshots.length - 1; i >= 0; i--) {
    const s = snapshots.get(chain.snapshots[i]!.segment)?.get(key)
    if (s !== undefined) return s
  }
  return undefined
}

const sameList = (a: Uint8Array | undefined, b: Uint8Array | undefined) =>
  decodeList(a).join(",") === decodeList(b).join(",")

export const runCoreSim = (seed: number, o: CoreSimOptions): CoreSimReport => {
  const random = new PCGRandom(seed)
  const between = (lo: number, hi: number) => lo + random.integer(hi - lo + 1)
  const chance = (p: number) => p > 0 && random.number() < p
  const agenda = new TimedHeap<Event>()
  let now = 0
  const at = (t: number, run: () => void) => agenda.push({ at: Math.max(t, now), run })

  // ---- storage ---------------------------------------------------------------------------------------------
  const log: Array<CommandEntry> = []
  const stateLog: Array<StateRecord> = [{ _tag: "Config", index: 0, config: o.store }]
  const snapshots = new Map<string, ReadonlyMap<Key, KeyState>>()
  let chain: Chain = { snapshots: [], replayFrom: { ordinal: 0, position: 0, index: 0 } }
  const violations: Array<Violation> = []
  const stalls: Array<readonly [number, number]> = []
  const counts = { crashes: 0, pauses: 0, ambiguous: 0, failed: 0, adoptions: 0, snapshots: 0 }

  /** When a call started now, taking `d`, completes: a stall holds it until storage resumes. */
  const completion = (d: number) => {
    let t = now + d
    for (const [from, to] of stalls) if (t >= from && t < to) t = to + between(0, o.delayMs[1])
    return t
  }

  const land = (entry: CommandEntry): boolean => {
    if (log.length !== entry.index) return false
    log.push(entry)
    const bound = maxPendingEntries(o.store.timely)
    if (entry.index + 1 - chainEnd(chain) > bound && !violations.some((v) => v.property === "timely-snapshot")) {
      violations.push({
        property: "timely-snapshot",
        detail: `entry ${entry.index} landed with the chain at ${chainEnd(chain)}: n − i_k > (1+ε)B = ${bound}`
      })
    }
    return true
  }

  // ---- processes ---------------------------------------------------------------------------------------------
  const procs: Array<Proc> = Array.from({ length: o.clients }, (_, p) => ({
    p,
    incarnation: 0,
    writer: "",
    core: undefined,
    pausedUntil: 0,
    nextId: 1,
    callbacks: new Map(),
    stateCursor: 0,
    stateSyncing: false,
    stateSyncAgain: false,
    stateWaiters: [],
    snapshotting: false,
    done: 0,
    txSeq: 0,
    current: undefined,
    attempts: new Map()
  }))
  const history: Array<Txn> = []
  let nextValue = 1
  let nextTxnId = 1

  /** Runs `f` in process `proc`'s incarnation `inc`: not if it died, later if it is paused. */
  const inProc = (proc: Proc, inc: number, f: () => void) => {
    if (proc.incarnation !== inc || proc.core === undefined) return
    if (now < proc.pausedUntil) return at(proc.pausedUntil, () => inProc(proc, inc, f))
    f()
  }

  const deliver = (proc: Proc, inc: number, input: CoreInput) =>
    inProc(proc, inc, () => perform(proc, inc, proc.core!.step(now, input)))

  /** A storage call of `proc`: `run` happens at storage; its answer, or a failure, comes back later. */
  const call = (
    proc: Proc,
    run: () => CoreInput,
    failed: () => CoreInput,
    ambiguous: (() => CoreInput) | undefined = undefined
  ) => {
    const inc = proc.incarnation
    const t = completion(between(o.delayMs[0], o.delayMs[1]))
    if (chance(o.failBefore)) {
      counts.failed++
      return at(t, () => deliver(proc, inc, failed()))
    }
    if (chance(o.ambiguous)) {
      counts.ambiguous++
      const late = ambiguous !== undefined && chance(o.lateLanding)
      at(late ? t + between(1, 40) : t, () => run())
      return at(t, () => deliver(proc, inc, (ambiguous ?? failed)()))
    }
    at(t, () => {
      const answer = run()
      deliver(proc, inc, answer)
    })
  }

  const unavailable = (operation: string) => ({
    _tag: "Unavailable" as const,
    operation,
    reason: "simulated storage failure",
    outcomeUnknown: false
  })

  /** One state-log read at a time per process (the shell's state lock); `then` runs after a read that started later. */
  const syncState = (proc: Proc, then?: () => void) => {
    if (then !== undefined) proc.stateWaiters.push(then)
    if (proc.stateSyncing) {
      proc.stateSyncAgain = true
      return
    }
    proc.stateSyncing = true
    const inc = proc.incarnation
    const waiters = proc.stateWaiters
    proc.stateWaiters = []
    at(completion(between(o.delayMs[0], o.delayMs[1])), () => {
      const records = stateLog.slice(proc.stateCursor)
      inProc(proc, inc, () => {
        proc.stateCursor += records.length
        proc.stateSyncing = false
        if (records.length > 0) perform(proc, inc, proc.core!.step(now, { _tag: "StateRecords", records }))
        if (proc.stateSyncAgain) {
          proc.stateSyncAgain = false
          syncState(proc)
        }
        for (const w of waiters) w()
      })
    })
  }

  /** The snapshotter of `proc`: as the shell's, with the state log as the arbiter of who extends the chain. */
  const snapshotter = (proc: Proc) => {
    if (proc.snapshotting) return
    proc.snapshotting = true
    const inc = proc.incarnation
    syncState(proc, () => {
      const core = proc.core!
      const partial = core.state.replay.snapshot()
      if (!core.hasSnapshotDuty || chainEnd(core.state.view.chain) !== partial.from || partial.to <= partial.from) {
        proc.snapshotting = false
        return
      }
      // Writing the blocks takes a few calls; the process may die or pause meanwhile.
      at(completion(between(o.delayMs[0], 3 * o.delayMs[1] + 1)), () =>
        inProc(proc, inc, () => {
          proc.snapshotting = false
          const segment = `snap-${partial.from}-${partial.to}-${proc.writer}`
          const extended = extendChain(
            chain,
            {
              from: partial.from,
              to: partial.to,
              segment,
              indexPosition: 0,
              keys: partial.keys.size,
              bytes: 0,
              blocks: 1
            },
            { ordinal: 0, position: partial.to, index: partial.to }
          )
          if (extended === undefined) return
          snapshots.set(segment, partial.keys)
          chain = extended
          counts.snapshots++
          stateLog.push({ _tag: "Chain", index: stateLog.length, chain, owner: proc.writer })
          syncState(proc)
        })
      )
    })
  }

  const perform = (proc: Proc, inc: number, effects: ReadonlyArray<CoreEffect>): void => {
    for (const e of effects) {
      switch (e._tag) {
        case "ReadLog":
          call(
            proc,
            () => {
              const entries = log.slice(e.from, e.from + e.max)
              return { _tag: "LogRead", sync: e.sync, from: e.from, entries, atTail: entries.length < e.max }
            },
            () => ({ _tag: "LogReadFailed", sync: e.sync, failure: unavailable("sync") })
          )
          break
        case "Append": {
          const timedOut = (): CoreInput => ({
            _tag: "AppendFailed",
            seq: e.seq,
            index: e.entry.index,
            kind: "ambiguous",
            failure: unavailable("append")
          })
          call(
            proc,
            () =>
              land(e.entry)
                ? { _tag: "Appended", seq: e.seq, index: e.entry.index }
                : {
                    _tag: "AppendFailed",
                    seq: e.seq,
                    index: e.entry.index,
                    kind: "conflict",
                    failure: unavailable("append")
                  },
            timedOut,
            timedOut
          )
          break
        }
        case "LoadHistory":
          call(
            proc,
            () => ({
              _tag: "History",
              sync: e.sync,
              lastModified: new Map(e.keys.map((k) => [k, lookupIn(snapshots, e.chain, k)?.modified] as const))
            }),
            () => ({ _tag: "LogReadFailed", sync: e.sync, failure: unavailable("history") })
          )
          break
        case "Lookup":
          call(
            proc,
            () => ({ _tag: "Looked", id: e.id, chain: e.chain, state: lookupIn(snapshots, e.chain, e.key) }),
            () => ({ _tag: "LookFailed", id: e.id, failure: unavailable("read snapshot"), again: false })
          )
          break
        case "LoadIndexes":
          call(
            proc,
            () => ({ _tag: "IndexesLoaded", chain: e.chain }),
            () => ({ _tag: "IndexesFailed", chain: e.chain })
          )
          break
        case "Reply": {
          const cb = proc.callbacks.get(e.id)
          proc.callbacks.delete(e.id)
          if (cb !== undefined) at(now, () => inProc(proc, inc, () => cb(e.reply)))
          break
        }
        case "WakeAt":
          at(e.atMs, () => deliver(proc, inc, { _tag: "Tick" }))
          break
        case "SnapshotDue":
          snapshotter(proc)
          break
        case "SyncStateLog":
          syncState(proc)
          break
        case "Note":
          if (e.note._tag === "Adopted") counts.adoptions++
          break
      }
    }
  }

  const request = (proc: Proc, make: (id: number) => CoreInput, cb: (reply: CoreReply) => void) => {
    const id = proc.nextId++
    proc.callbacks.set(id, cb)
    const inc = proc.incarnation
    at(now, () => deliver(proc, inc, make(id)))
  }

  // ---- the workload ------------------------------------------------------------------------------------------
  const complete = (proc: Proc, type: Txn["type"], ops: ReadonlyArray<MicroOp>) => {
    const c = proc.current!
    proc.current = undefined
    history.push({
      id: c.id,
      process: `p${proc.p}`,
      type,
      ops,
      invokedAt: c.invokedAt,
      completedAt: type === "info" ? Number.POSITIVE_INFINITY : now
    })
    proc.done++
    const inc = proc.incarnation
    at(now + between(0, 3), () => inProc(proc, inc, () => nextTxn(proc)))
  }

  const failedAs = (reply: CoreReply): Txn["type"] =>
    reply._tag === "Failed" &&
    (reply.failure._tag === "Closed" || (reply.failure._tag === "Unavailable" && reply.failure.outcomeUnknown))
      ? "info"
      : "fail"

  const nextTxn = (proc: Proc) => {
    if (proc.done >= o.txnsPerClient || proc.current !== undefined) return
    const id = nextTxnId++
    if (random.number() < o.getShare) {
      const key = `k${random.integer(o.keys)}`
      proc.current = { id, invokedAt: now, planned: [{ f: "read", key, value: undefined }] }
      return request(
        proc,
        (rid) => ({ _tag: "Get", id: rid, key, maxAttempts: MAX_ATTEMPTS }),
        (r) =>
          r._tag === "Value"
            ? complete(proc, "ok", [{ f: "read", key, value: decodeList(r.state?.value) }])
            : complete(proc, "fail", proc.current!.planned)
      )
    }
    const planned: Array<MicroOp> = []
    for (let i = 0, n = between(1, 4); i < n; i++) {
      const key = `k${random.integer(o.keys)}`
      planned.push(
        random.number() < o.readShare ? { f: "read", key, value: undefined } : { f: "append", key, value: nextValue++ }
      )
    }
    proc.current = { id, invokedAt: now, planned }
    attempt(proc, 1)
  }

  const attempt = (proc: Proc, n: number) => {
    const planned = proc.current!.planned
    const retry = () => {
      if (n >= MAX_ATTEMPTS) return complete(proc, "fail", planned)
      const inc = proc.incarnation
      at(now + between(0, Math.min(64, 2 ** n)), () => inProc(proc, inc, () => attempt(proc, n + 1)))
    }
    request(
      proc,
      (rid) => ({ _tag: "Ride", id: rid }),
      (r) => {
        if (r._tag !== "Tail") return complete(proc, failedAs(r), planned)
        const snapshot = r.tail
        const reads = new Set<Key>()
        const writes = new Map<Key, Uint8Array>()
        const done: Array<MicroOp> = []
        const step = (i: number) => {
          if (i === planned.length) return commit()
          const op = planned[i]!
          const withList = (list: ReadonlyArray<number>) => {
            if (op.f === "read") done.push({ f: "read", key: op.key, value: list })
            else {
              writes.set(op.key, encodeList([...list, op.value]))
              done.push(op)
            }
            step(i + 1)
          }
          const own = writes.get(op.key)
          if (own !== undefined) return withList(decodeList(own))
          reads.add(op.key)
          request(
            proc,
            (rid) => ({ _tag: "Read", id: rid, key: op.key, snapshot }),
            (rr) => {
              if (rr._tag === "Value") return withList(decodeList(rr.state?.value))
              if (rr._tag === "Moved") return retry()
              complete(proc, failedAs(rr), planned)
            }
          )
        }
        const commit = () => {
          if (writes.size === 0) return complete(proc, "ok", done)
          const list: Array<Write> = [...writes].map(([key, value]) => ({ key, value }))
          const intention: Intention = {
            snapshotEntries: snapshot,
            checked: [...reads],
            writes: list,
            tx: ++proc.txSeq
          }
          const tried = proc.attempts.get(proc.current!.id) ?? []
          tried.push(`${proc.writer}/${intention.tx}`)
          proc.attempts.set(proc.current!.id, tried)
          request(
            proc,
            (rid) => ({ _tag: "Submit", id: rid, intention, bytes: 16 * list.length }),
            (rr) => {
              if (rr._tag !== "Outcome") return complete(proc, failedAs(rr), planned)
              if (rr.outcome._tag === "Committed") return complete(proc, "ok", done)
              retry()
            }
          )
        }
        step(0)
      }
    )
  }

  // ---- incarnations ------------------------------------------------------------------------------------------
  const start = (proc: Proc) => {
    proc.incarnation++
    proc.writer = `p${proc.p}i${proc.incarnation}`
    proc.callbacks.clear()
    proc.stateSyncing = false
    proc.stateSyncAgain = false
    proc.stateWaiters = []
    proc.snapshotting = false
    // A cold start reads the state log (its newest chain) and replays the command log from the chain's end.
    const view = { ...emptyStateView, config: o.store, chain, next: stateLog.length }
    proc.stateCursor = stateLog.length
    proc.core = new ClientCore(
      {
        writer: proc.writer,
        config: o.store,
        minSyncGapMs: 2,
        maxBatchIntentions: 64,
        maxBatchBytes: 64 * 1024,
        readRecords: 16,
        snapshots: true,
        variant: o.variant
      },
      view
    )
    request(
      proc,
      (id) => ({ _tag: "Ride", id }),
      (r) => {
        if (r._tag === "Tail") return nextTxn(proc)
        // The first sync failed: try again (a process retries its start).
        const inc = proc.incarnation
        at(now + 50, () => inProc(proc, inc, () => start(proc)))
      }
    )
  }

  const crash = (proc: Proc) => {
    if (proc.core === undefined || proc.done >= o.txnsPerClient) return
    counts.crashes++
    proc.core = undefined
    proc.callbacks.clear()
    if (proc.current !== undefined) {
      const c = proc.current
      proc.current = undefined
      history.push({
        id: c.id,
        process: `p${proc.p}`,
        type: "info",
        ops: c.planned,
        invokedAt: c.invokedAt,
        completedAt: Number.POSITIVE_INFINITY
      })
      proc.done++
    }
    at(now + between(5, 60), () => start(proc))
  }

  const windows = (w: FaultWindows | undefined, each: (from: number, to: number) => void) => {
    if (w === undefined) return
    for (let t = between(w.everyMs[0], w.everyMs[1]); t < o.limitMs; t += between(w.everyMs[0], w.everyMs[1])) {
      const d = between(w.forMs[0], w.forMs[1])
      each(t, t + d)
      t += d
    }
  }
  windows(o.stalls, (from, to) => stalls.push([from, to]))
  counts.pauses = 0
  for (const proc of procs) {
    windows(o.pauses, (from, to) =>
      at(from, () => {
        counts.pauses++
        proc.pausedUntil = Math.max(proc.pausedUntil, to)
      })
    )
    windows(o.crashes, (t) => at(t, () => crash(proc)))
    at(between(0, 5), () => start(proc))
  }

  // ---- run ---------------------------------------------------------------------------------------------------
  const finished = () => procs.every((p) => p.done >= o.txnsPerClient)
  for (;;) {
    const e = agenda.pop()
    if (e === undefined || e.at > o.limitMs) break
    now = e.at
    e.run()
    if (finished()) break
  }

  // ---- checks ------------------------------------------------------------------------------------------------
  const replay = new CommandReplay({ base: 0, next: 0, window: o.store.conflictWindow, decide: o.variant.decide })
  const outcomes = new Map<string, { outcome: Outcome; count: number }>()
  const statesAt: Array<Map<Key, Uint8Array | undefined>> = []
  const capture = () => {
    const m = new Map<Key, Uint8Array | undefined>()
    for (let k = 0; k < o.keys; k++) m.set(`k${k}`, replay.get(`k${k}`)?.value)
    statesAt.push(m)
  }
  capture()
  for (const entry of log) {
    const results = replay.apply(entry)
    entry.intentions.forEach((t, slot) => {
      const key = `${entry.writer}/${t.tx}`
      const seen = outcomes.get(key)
      if (seen !== undefined) seen.count++
      else outcomes.set(key, { outcome: results[slot]!, count: 1 })
    })
    capture()
  }
  for (const [key, seen] of outcomes) {
    if (seen.count > 1)
      violations.push({ property: "no duplicated commit", detail: `intention ${key} appears ${seen.count} times` })
  }
  const byId = new Map(history.map((t) => [t.id, t]))
  for (const proc of procs) {
    for (const [id, tried] of proc.attempts) {
      const txn = byId.get(id)
      const committed = tried.filter((a) => outcomes.get(a)?.outcome._tag === "Committed").length
      if (txn?.type === "ok" && committed !== 1) {
        violations.push({
          property: "no lost commit",
          detail: `T${id} reported committed, ${committed} attempts committed`
        })
      }
      if (txn?.type === "fail" && committed > 0) {
        violations.push({ property: "no lost commit", detail: `T${id} reported aborted, but committed` })
      }
    }
  }
  // Every live client's state, through its read path at its own tail, is the log's replay there.
  for (const proc of procs) {
    const core = proc.core
    if (core === undefined) continue
    const tail = core.next
    for (let k = 0; k < o.keys; k++) {
      const key = `k${k}`
      let step = core.state.read(key, tail)
      if (step._tag === "Lookup")
        step = core.state.afterLookup(key, tail, step.chain, lookupIn(snapshots, step.chain, key))
      const expected = statesAt[tail]?.get(key)
      if (step._tag !== "Value" || !sameList(step.state?.value, expected)) {
        violations.push({
          property: "state = replay",
          detail: `client ${proc.writer} at ${tail}: ${key} is ${step._tag === "Value" ? `[${decodeList(step.state?.value).join(",")}]` : step._tag}, the log says [${decodeList(expected).join(",")}]`
        })
        break
      }
    }
  }
  const elle = checkListAppend(history, "strict-serializable")
  for (const a of elle.anomalies.slice(0, 3)) violations.push({ property: `history: ${a.type}`, detail: a.explanation })
  // Last: a run that stalls is reported, but what it did before (a stale read, a lost commit) says more.
  if (!finished()) {
    violations.push({
      property: "liveness",
      detail: `workload unfinished after ${o.limitMs} simulated ms (${procs.map((p) => p.done).join("/")} done)`
    })
  }

  return {
    seed,
    violation: violations[0],
    stats: {
      txns: history.length,
      committed: history.filter((t) => t.type === "ok").length,
      aborted: history.filter((t) => t.type === "fail").length,
      unknown: history.filter((t) => t.type === "info").length,
      entries: log.length,
      snapshots: counts.snapshots,
      adoptions: counts.adoptions,
      crashes: counts.crashes,
      pauses: counts.pauses,
      stalls: stalls.filter(([from]) => from <= now).length,
      ambiguousCalls: counts.ambiguous,
      failedCalls: counts.failed,
      simulatedMs: now
    }
  }
}
