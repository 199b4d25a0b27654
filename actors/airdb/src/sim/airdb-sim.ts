/**
 * The AirDB simulator: several clients (each a process that crashes and restarts as a new incarnation) run
 * list-append transactions over one simulated storage with delays, failures, ambiguous calls and crashes, on
 * Effect's TestClock, all drawn from one seed. After the run it checks:
 *
 *   - state = replay: every client's state at the end of its workload, and a fresh client's after the run,
 *     equal replaying the command log from storage;
 *   - the timely-snapshot bound n − i_k ≤ (1+ε)B on every command entry that landed (SimStorage);
 *   - no lost or duplicated commit: a transaction reported committed committed exactly once, at its
 *     timestamp; one reported aborted never committed; no intention appears twice;
 *   - the history (Elle list-append): strict serializability, or snapshot isolation.
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Random from "effect/Random"
import * as Scope from "effect/Scope"
import { type AirDbClient, type ClientHooks, openClient } from "../client/client.js"
import type { AirDbOptions } from "../client/options.js"
import type { CoreVariant } from "../core/client-state.js"
import type { StoreConfig } from "../core/coordination.js"
import { CommandReplay } from "../core/replay.js"
import type { Intention, Isolation, Key, Outcome } from "../core/types.js"
import { CorruptRecord, decodeCommandEntry, decodeStateRecord } from "../log/record-codec.js"
import { SharedLog } from "../log/shared-log.js"
import { checkListAppend, type Txn } from "./elle.js"
import { completionOf, plannedOps, planTxn, runTxn } from "./list-append.js"
import { runSimulated } from "./sim-runtime.js"
import { type FaultPlan, type PauseHandle, SimStorage, type Violation } from "./sim-storage.js"

export interface SimOptions {
  readonly clients: number
  readonly txnsPerClient: number
  readonly keys: number
  readonly readShare: number
  /** Share of transactions that are one linearizable `Get` instead. */
  readonly getShare: number
  readonly isolation: Isolation
  readonly faults: FaultPlan
  readonly store: Partial<Omit<StoreConfig, "formatVersion">>
  /** Simulated milliseconds a crashed client stays down. */
  readonly restartMs: readonly [number, number]
  /** Simulated time after which an unfinished run is a liveness violation. */
  readonly limitMs: number
  readonly hooks: ClientHooks
  /** Run ready fibers in a seeded random order (more interleavings per seed). */
  readonly shuffle?: boolean
  /** Each client's block cache (small: reads miss it and go to storage). */
  readonly cacheBytes?: number
}

export interface SimStats {
  readonly txns: number
  readonly committed: number
  readonly aborted: number
  readonly unknown: number
  readonly entries: number
  readonly crashes: number
  readonly pauses: number
  readonly stalls: number
  readonly outages: number
  readonly ambiguousCalls: number
  readonly failedCalls: number
  readonly snapshots: number
  readonly maxPending: number
  readonly simulatedMs: number
}

export interface SimReport {
  readonly seed: number
  readonly violation: Violation | undefined
  readonly stats: SimStats
}

const STORE = "sim"

interface Process {
  readonly pause: PauseHandle
  done: number
  incarnation: number
  /** Each history transaction's intention ids (tx), by writer incarnation. */
  readonly attempts: Map<number, Array<{ readonly writer: string; readonly tx: number }>>
  checkpoints: Array<{
    readonly writer: string
    readonly snapshot: number
    readonly state: ReadonlyMap<Key, Uint8Array>
  }>
}

/** Reads the whole command log from storage and replays it with the same decision rule as the clients. */
const referenceReplay = (storage: SimStorage, decide: CoreVariant["decide"] | undefined) =>
  Effect.gen(function* () {
    const store = storage.reliable
    const stateLog = new SharedLog({ store, prefix: `${STORE}-s`, segmentRecords: 1, metaRecords: 1_000_000 })
    yield* stateLog.refreshMeta()
    const configRecord = decodeStateRecord(
      (yield* store.read(stateLog.segments[0]!.segment, 0, { maxRecords: 1 }))[0]!.bytes,
      "state",
      0
    )
    if (configRecord instanceof CorruptRecord || configRecord._tag !== "Config") {
      return yield* Effect.die(new Error("no store config"))
    }
    const config = configRecord.config
    const log = new SharedLog({
      store,
      prefix: `${STORE}-c`,
      segmentRecords: config.layout.commandSegmentRecords,
      metaRecords: config.layout.metaSegmentRecords
    })
    yield* log.refreshMeta()
    const replay = new CommandReplay({
      base: 0,
      next: 0,
      window: config.conflictWindow,
      ...(decide === undefined ? {} : { decide })
    })
    const outcomes = new Map<string, { readonly outcome: Outcome; readonly intention: Intention; count: number }>()
    const statesAt = new Map<number, Map<Key, Uint8Array>>()
    let cursor = log.startCursor()
    const capture = () => {
      const m = new Map<Key, Uint8Array>()
      for (const [k, s] of replay.snapshot().keys) if (s.value !== undefined) m.set(k, s.value)
      statesAt.set(replay.next, m)
    }
    capture()
    for (;;) {
      const got = yield* log.read(cursor, 256)
      cursor = got.cursor
      if (got.records.length === 0) break
      for (const r of got.records) {
        const entry = decodeCommandEntry(r.bytes, r.segment, r.location.position)
        if (entry instanceof CorruptRecord) return yield* Effect.die(entry)
        const results = replay.apply(entry)
        entry.intentions.forEach((intention, slot) => {
          const key = `${entry.writer}/${intention.tx}`
          const seen = outcomes.get(key)
          if (seen !== undefined) seen.count++
          else outcomes.set(key, { outcome: results[slot]!, intention, count: 1 })
        })
        capture()
      }
    }
    return { outcomes, statesAt, entries: replay.next, config }
  })

const sameState = (a: ReadonlyMap<Key, Uint8Array>, b: ReadonlyMap<Key, Uint8Array>): string | undefined => {
  for (const [k, v] of a) {
    const w = b.get(k)
    if (w === undefined || Buffer.compare(Buffer.from(v), Buffer.from(w)) !== 0) return `key ${k}`
  }
  for (const k of b.keys()) if (!a.has(k)) return `key ${k}`
  return undefined
}

export const runAirDbSim = (seed: number, options: SimOptions): SimReport => {
  const random = Random.make(seed)
  const storage = new SimStorage(STORE, options.faults, random)
  const history: Array<Txn> = []
  let nextValue = 1
  const clientOptions = (writer: string): AirDbOptions => ({
    store: STORE,
    clientId: writer,
    isolation: options.isolation,
    create: options.store,
    minSyncGapMs: 2,
    blockBytes: 512,
    gcGraceMs: 2_000,
    maxAttempts: 8,
    ...(options.cacheBytes === undefined ? {} : { cacheBytes: options.cacheBytes })
  })

  const runProcess = (p: number, process: Process) =>
    Effect.gen(function* () {
      while (process.done < options.txnsPerClient) {
        const writer = `p${p}i${process.incarnation++}`
        const crash = yield* Deferred.make<void>()
        const scope = yield* Scope.make()
        let current:
          | { readonly id: number; readonly invokedAt: number; readonly ops: ReturnType<typeof plannedOps> }
          | undefined
        const hooks: ClientHooks = {
          ...options.hooks,
          onSubmit: (intention) => {
            if (current === undefined) return
            const list = process.attempts.get(current.id) ?? []
            list.push({ writer, tx: intention.tx })
            process.attempts.set(current.id, list)
          }
        }
        const work = Effect.gen(function* () {
          const client: AirDbClient = yield* openClient(
            storage.viewFor(crash, process.pause),
            clientOptions(writer),
            hooks
          )
          while (process.done < options.txnsPerClient) {
            const planned = yield* planTxn(random, options.keys, options.readShare, () => nextValue++, options.getShare)
            const id = history.length + 1_000_000 * (p + 1)
            const invokedAt = yield* Clock.currentTimeMillis
            current = { id, invokedAt, ops: plannedOps(planned) }
            const r = yield* Effect.either(runTxn(client, planned))
            const completedAt = yield* Clock.currentTimeMillis
            if (Either.isRight(r)) {
              history.push({ id, process: `p${p}`, type: "ok", ops: r.right.ops, invokedAt, completedAt })
            } else {
              const type = completionOf(r.left)
              history.push({
                id,
                process: `p${p}`,
                type,
                ops: current.ops,
                invokedAt,
                completedAt: type === "info" ? Number.POSITIVE_INFINITY : completedAt
              })
            }
            current = undefined
            process.done++
          }
          // The end of this incarnation's workload: its state must equal the log's at its snapshot.
          const { snapshot, state } = yield* client.dump
          process.checkpoints.push({ writer, snapshot, state })
        })
        const ended = yield* Effect.either(
          Effect.raceFirst(
            Scope.extend(work, scope),
            Effect.zipRight(Deferred.await(crash), Effect.fail("crashed" as const))
          )
        )
        yield* Scope.close(scope, Exit.void)
        if (current !== undefined) {
          // Crashed (or failed) in the middle of a transaction: its outcome is unknown.
          const c = current as {
            readonly id: number
            readonly invokedAt: number
            readonly ops: ReturnType<typeof plannedOps>
          }
          history.push({
            id: c.id,
            process: `p${p}`,
            type: "info",
            ops: c.ops,
            invokedAt: c.invokedAt,
            completedAt: Number.POSITIVE_INFINITY
          })
          process.done++
        }
        if (Either.isLeft(ended)) {
          yield* Effect.sleep(yield* random.nextIntBetween(options.restartMs[0], options.restartMs[1] + 1))
        }
      }
    })

  const program = Effect.gen(function* () {
    const processes: Array<Process> = Array.from({ length: options.clients }, () => ({
      pause: { until: 0 },
      done: 0,
      incarnation: 0,
      attempts: new Map(),
      checkpoints: []
    }))
    const nemesis = yield* Effect.fork(
      Effect.all([storage.storageFaults, ...processes.map((p) => storage.clientPauses(p.pause))], {
        concurrency: "unbounded"
      })
    )
    const fibers = yield* Effect.forEach(processes, (process, p) => Effect.fork(runProcess(p, process)))
    const finished = yield* Effect.timeoutOption(Fiber.joinAll(fibers), options.limitMs)
    const stuck = finished._tag === "None"
    const elapsed = yield* Clock.currentTimeMillis
    yield* Effect.forEach(fibers, Fiber.interrupt, { discard: true })
    yield* Fiber.interrupt(nemesis)

    // A fresh client after the run, with storage healed: it starts cold and must see the log's final state.
    storage.heal()
    for (const p of processes) p.pause.until = 0
    const final = yield* Effect.scoped(
      Effect.gen(function* () {
        const c = yield* openClient(
          storage.viewFor(yield* Deferred.make<void>()),
          clientOptions("checker"),
          options.hooks
        )
        return yield* c.dump
      })
    ).pipe(Effect.timeoutOption(60_000), Effect.exit)

    const reference = yield* referenceReplay(storage, options.hooks.variant?.decide)
    const violations: Array<Violation> = [...storage.violations]
    if (stuck) {
      violations.push({
        property: "liveness",
        detail: `workload unfinished after ${options.limitMs} simulated ms (${processes.map((p) => p.done).join("/")} done)`
      })
    }
    if (Exit.isFailure(final) || final.value._tag === "None") {
      const why = Exit.isFailure(final) ? String(final.cause) : "no answer in 60 simulated seconds"
      violations.push({ property: "cold start", detail: `a fresh client could not start: ${why}` })
    } else {
      const { snapshot, state } = final.value.value
      const expected = reference.statesAt.get(snapshot)
      const diff = expected === undefined ? "no such log position" : sameState(state, expected)
      if (diff !== undefined) {
        violations.push({ property: "state = replay", detail: `fresh client at ${snapshot}: differs at ${diff}` })
      }
    }
    for (const process of processes) {
      for (const c of process.checkpoints) {
        const expected = reference.statesAt.get(c.snapshot)
        const diff = expected === undefined ? "no such log position" : sameState(c.state, expected)
        if (diff !== undefined) {
          violations.push({
            property: "state = replay",
            detail: `client ${c.writer} at ${c.snapshot}: differs at ${diff}`
          })
        }
      }
    }
    for (const [key, seen] of reference.outcomes) {
      if (seen.count > 1)
        violations.push({ property: "no duplicated commit", detail: `intention ${key} appears ${seen.count} times` })
    }
    const byId = new Map(history.map((t) => [t.id, t]))
    for (const [p, process] of processes.entries()) {
      for (const [id, attempts] of process.attempts) {
        const txn = byId.get(id)
        const committed = attempts.filter(
          (a) => reference.outcomes.get(`${a.writer}/${a.tx}`)?.outcome._tag === "Committed"
        )
        if (txn?.type === "ok" && committed.length !== 1) {
          violations.push({
            property: "no lost commit",
            detail: `p${p} T${id} reported committed, ${committed.length} attempts committed`
          })
        }
        if (txn?.type === "fail" && committed.length > 0) {
          violations.push({ property: "no lost commit", detail: `p${p} T${id} reported aborted, but committed` })
        }
        if (committed.length > 1) {
          violations.push({
            property: "no duplicated commit",
            detail: `p${p} T${id} committed ${committed.length} times`
          })
        }
      }
    }
    const elle = checkListAppend(
      history,
      options.isolation === "serializable" ? "strict-serializable" : "snapshot-isolation"
    )
    for (const a of elle.anomalies.slice(0, 3))
      violations.push({ property: `history: ${a.type}`, detail: a.explanation })

    const stats: SimStats = {
      txns: history.length,
      committed: history.filter((t) => t.type === "ok").length,
      aborted: history.filter((t) => t.type === "fail").length,
      unknown: history.filter((t) => t.type === "info").length,
      entries: reference.entries,
      crashes: storage.crashes,
      pauses: storage.pauses,
      stalls: storage.stalls,
      outages: storage.outages,
      ambiguousCalls: storage.ambiguousCalls,
      failedCalls: storage.failedCalls,
      snapshots: [...storage.contents.names()].filter((n) => n.startsWith(`${STORE}-snap-`)).length,
      maxPending: storage.maxPendingSeen,
      simulatedMs: elapsed
    }
    return { seed, violation: violations[0], stats }
  })

  const outcome = runSimulated(
    program.pipe(Effect.withRandom(random)),
    options.limitMs + 600_000,
    options.shuffle === true ? seed : undefined
  )
  if (outcome._tag === "Done" && Exit.isSuccess(outcome.exit)) return outcome.exit.value
  const detail =
    outcome._tag === "Done"
      ? `the simulation failed: ${String((outcome.exit as Exit.Failure<unknown, unknown>).cause)}`
      : outcome._tag
  return { seed, violation: { property: "simulation", detail }, stats: emptyStats(outcome.simulatedMs) }
}

const emptyStats = (simulatedMs: number): SimStats => ({
  txns: 0,
  committed: 0,
  aborted: 0,
  unknown: 0,
  entries: 0,
  crashes: 0,
  pauses: 0,
  stalls: 0,
  outages: 0,
  ambiguousCalls: 0,
  failedCalls: 0,
  snapshots: 0,
  maxPending: 0,
  simulatedMs
})
