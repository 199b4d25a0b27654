/**
 * One simulated run of a backup following a primary: the follower core (core/follower.ts), and around it a
 * shell that performs its effects on simulated time — a stream with delays, reordering, duplicates and lost
 * messages; hints honest or bad; a store that persists blocks atomically; crashes that lose everything not
 * persisted, and restarts as a new incarnation on what the store holds. Blocks execute for real (the chain's
 * contract runtime, through the backup's own prefetched-state and pending-writes classes).
 *
 * Checked: the backup's store equals the primary's state after every persisted block (a digest per
 * block); blocks are persisted one after another, never skipped, never twice; a block runs only after its
 * parent verified; a verified block has the primary's real state hash; an honest primary is never reported
 * diverged, a forged block always is and is never persisted; after the faults stop the backup reaches the
 * primary's head (a bad hint only costs time); honest hints serve every read.
 */
import { type Address, executeBlock, type PreState, Prng, type ReadSource, Source, type StorageKey } from "@reef/chain"
import {
  createFollower,
  type FollowerInput,
  type FollowerOutput,
  type FollowerParams,
  type FollowerState,
  type FollowerStep,
  sameHash,
  stepFollower
} from "../core/follower.js"
import { type BatchPlan, blockCaches } from "../core/plan.js"
import { PendingWrites, PrefetchedState } from "../replay/prefetched-state.js"
import { HINT_KINDS, type HintKind, simHint } from "./hints.js"
import { CHAIN_BLOCKS, type Digest, type PrimaryChain, primaryChain, sameDigest, updateDigest } from "./primary.js"

export interface Scenario {
  readonly name: string
  readonly description: string
  /** Relative weights of the hint kinds the stream carries. */
  readonly hints: Partial<Record<HintKind, number>>
  /** Before the faults stop: chance a block or hint message is lost, or sent twice. */
  readonly blockLoss: number
  readonly hintLoss: number
  readonly duplicates: number
  /** Extra delay of a message, uniform up to this (reorders messages). */
  readonly jitterMs: number
  /** Most crashes (and restarts) a run draws. */
  readonly maxCrashes: number
  /** One block's published state hash is wrong: the backup must stop there. */
  readonly forged: boolean
}

/** Deliberately broken followers plug in here (mutants.ts). */
export interface SimHooks {
  readonly create?: (params: FollowerParams, head: number) => FollowerState
  readonly step?: (s: FollowerState, input: FollowerInput) => FollowerStep
}

export interface Violation {
  readonly property: string
  readonly detail: string
  readonly atMs: number
}

export interface RunStats {
  readonly blocks: number
  readonly executions: number
  readonly hintsRejected: number
  readonly hintFailures: number
  readonly refetches: number
  readonly duplicates: number
  readonly crashes: number
  readonly misses: number
}

export interface RunResult {
  readonly seed: number
  readonly scenario: string
  readonly violations: ReadonlyArray<Violation>
  readonly stats: RunStats
  /** The run's last events (printed when a seed fails). */
  readonly trace: ReadonlyArray<string>
}

type Event =
  | { readonly kind: "produce" }
  | { readonly kind: "poll" }
  | { readonly kind: "crash" }
  | { readonly kind: "restart" }
  /** An input for incarnation `life` (lost if it died first). */
  | { readonly kind: "input"; readonly life: number; readonly input: FollowerInput }
  | { readonly kind: "prefetched"; readonly life: number; readonly batch: number; readonly plan: BatchPlan }
  | { readonly kind: "commit"; readonly life: number; readonly block: number }

/** Events in time order, ties in insertion order. */
class Clock {
  private readonly events: Array<{ readonly at: number; readonly n: number; readonly event: Event }> = []
  private inserted = 0
  now = 0

  after(ms: number, event: Event): void {
    const item = { at: this.now + Math.max(0, ms), n: this.inserted++, event }
    let i = this.events.length
    while (
      i > 0 &&
      (this.events[i - 1]!.at > item.at || (this.events[i - 1]!.at === item.at && this.events[i - 1]!.n > item.n))
    )
      i--
    this.events.splice(i, 0, item)
  }

  next(): Event | undefined {
    const item = this.events.shift()
    if (item !== undefined) this.now = item.at
    return item?.event
  }
}

/** The backup's store: the genesis, the blocks it persisted, a digest of its state. */
class SimStore {
  readonly overlay = new Map<StorageKey, number>()

  constructor(
    private readonly genesis: ReadonlyMap<StorageKey, number>,
    public head: number,
    public digest: Digest
  ) {}

  read(key: StorageKey): number {
    const value = this.overlay.get(key)
    return value !== undefined ? value : (this.genesis.get(key) ?? 0)
  }

  apply(changes: ReadonlyArray<{ readonly key: StorageKey; readonly after: number }>): void {
    for (const { key, after } of changes) {
      this.digest = updateDigest(this.digest, key, this.read(key), after)
      this.overlay.set(key, after)
    }
    this.head++
  }
}

/** A parent state read on demand: pending writes of blocks the store does not hold yet, then the store. */
class SimOnDemand implements PreState {
  lastSource: ReadSource = Source.Zero
  constructor(
    private readonly store: SimStore,
    private readonly head: number,
    private readonly pending: PendingWrites | undefined,
    private readonly codes: ReadonlyMap<Address, Uint8Array>
  ) {}

  storage(key: StorageKey): number {
    const newer = this.pending?.newerThan(key, this.head)
    const value = newer ?? this.store.read(key)
    this.lastSource = value === 0 ? Source.Zero : Source.Plain
    return value
  }

  code(address: Address): Uint8Array | undefined {
    return this.codes.get(address)
  }
}

/** One incarnation of the backup process: its core and what its shell holds in memory. */
interface Life {
  readonly id: number
  core: FollowerState
  subscription: { pos: number } | undefined
  credit: number
  readonly pending: PendingWrites
  readonly prefetched: Map<
    number,
    { caches: Array<Map<StorageKey, number>>; code: Map<Address, Uint8Array>; head: number }
  >
  running: { number: number; changes: ReturnType<typeof executeBlock>["changes"] } | undefined
  /** The block the executor may run next (its parent verified). */
  nextToRun: number
  /** Persists in flight, in order, with their changes. */
  readonly commits: Array<{ readonly block: number; readonly changes: ReturnType<typeof executeBlock>["changes"] }>
  lastCommitAt: number
}

export const emptyStats = (): { -readonly [K in keyof RunStats]: number } => ({
  blocks: 0,
  executions: 0,
  hintsRejected: 0,
  hintFailures: 0,
  refetches: 0,
  duplicates: 0,
  crashes: 0,
  misses: 0
})

const BLOCK_INTERVAL_MS = 20
const POLL_MS = 100
const QUIET_MS = 4000
const TRACE_LINES = 40

const pick = <T>(rng: Prng, xs: ReadonlyArray<T>): T => xs[rng.int(xs.length)]!

const weighted = (rng: Prng, weights: Partial<Record<HintKind, number>>): HintKind => {
  const total = HINT_KINDS.reduce((s, k) => s + (weights[k] ?? 0), 0)
  let x = rng.next() * total
  for (const k of HINT_KINDS) {
    x -= weights[k] ?? 0
    if (x < 0) return k
  }
  return "honest"
}

/** The follower's parameters a seed draws: small batches and windows reach the edge cases sooner. */
export const drawParams = (rng: Prng): FollowerParams => {
  const batchBlocks = pick(rng, [1, 2, 3, 4, 8, 32])
  return {
    batchBlocks,
    readers: pick(rng, [1, 2, 4]),
    batchesAhead: pick(rng, [1, 2, 3]),
    windowBlocks: batchBlocks * pick(rng, [1, 2, 4]),
    maxUnpersisted: pick(rng, [1, 2, 8, 128]),
    hintWaitMs: 50,
    catchUpHintWaitMs: 300,
    gapWaitMs: 150,
    useHints: true,
    persist: true
  }
}

export const runSim = (seed: number, scenario: Scenario, hooks: SimHooks = {}): RunResult => {
  const chain: PrimaryChain = primaryChain()
  const rng = new Prng(seed, 0x1ea)
  const params = drawParams(rng)
  const first = rng.int(CHAIN_BLOCKS - 48)
  const length = 12 + rng.int(36)
  const last = first + length
  const backlog = rng.int(length + 1)
  const forged = scenario.forged ? first + 1 + rng.int(length) : undefined
  const hintKinds = new Map<number, HintKind>()
  const faultsEndMs = length * BLOCK_INTERVAL_MS + 200
  const endMs = faultsEndMs + QUIET_MS

  const clock = new Clock()
  const violations: Array<Violation> = []
  const trace: Array<string> = []
  const log = (line: string) => {
    trace.push(`${clock.now.toFixed(1).padStart(8)} ms  ${line}`)
    if (trace.length > TRACE_LINES) trace.shift()
  }
  const violate = (property: string, detail: string) => {
    log(`VIOLATION ${property}: ${detail}`)
    violations.push({ property, detail, atMs: clock.now })
  }
  const stats = emptyStats()

  // The backup's store starts as a copy of the primary's at `first`.
  let digest = chain.digests[0]!
  const store = new SimStore(chain.genesis, 0, digest)
  for (let n = 1; n <= first; n++) store.apply(chain.blocks[n - 1]!.changes)
  digest = store.digest
  let produced = first + backlog
  let divergedAt: number | undefined
  let stopped = false

  const create = hooks.create ?? createFollower
  const step = hooks.step ?? stepFollower
  const delay = () => 0.2 + rng.next() * scenario.jitterMs
  const faulty = () => clock.now < faultsEndMs

  let life: Life | undefined
  let lives = 0

  const begin = () => {
    const id = ++lives
    life = {
      id,
      core: create(params, store.head),
      subscription: undefined,
      credit: 0,
      pending: new PendingWrites(),
      prefetched: new Map(),
      running: undefined,
      nextToRun: store.head + 1,
      commits: [],
      lastCommitAt: clock.now
    }
    log(`incarnation ${id} starts on a store at block ${store.head}`)
    feed({ _tag: "Start" })
  }

  const streamBlock = (n: number) => {
    const block = chain.blocks[n - 1]!
    const stateHash = n === forged ? Uint8Array.from(block.stateHash, (b) => b ^ 0xff) : block.stateHash
    return { number: n, txs: block.txs, stateHash }
  }

  /** Sends what the subscription may: blocks the primary has, below the credit. */
  const pump = () => {
    const l = life
    if (l?.subscription === undefined) return
    const sub = l.subscription
    while (sub.pos < l.credit && sub.pos <= produced && sub.pos <= last) {
      const n = sub.pos++
      const copies = rng.next() < scenario.duplicates ? 2 : 1
      for (let c = 0; c < copies; c++) {
        if (!(faulty() && rng.next() < scenario.blockLoss)) {
          clock.after(delay(), { kind: "input", life: l.id, input: { _tag: "BlockArrived", block: streamBlock(n) } })
        }
        if (!(faulty() && rng.next() < scenario.hintLoss)) {
          let kind = hintKinds.get(n)
          if (kind === undefined) {
            kind = weighted(rng, scenario.hints)
            hintKinds.set(n, kind)
          }
          clock.after(delay(), {
            kind: "input",
            life: l.id,
            input: { _tag: "HintArrived", block: n, hint: simHint(n, kind) }
          })
        }
      }
    }
  }

  /** Writes a block to the store, checking it is the next one and leaves the primary's state. */
  const persistToStore = (
    block: number,
    changes: ReadonlyArray<{ readonly key: StorageKey; readonly after: number }>
  ) => {
    if (block !== store.head + 1) {
      violate(block <= store.head ? "double-apply" : "skip", `persisted block ${block} on a store at ${store.head}`)
      stopped = true
      return
    }
    if (block === forged) violate("forged-persisted", `persisted block ${block}, whose published hash is forged`)
    store.apply(changes)
    if (!sameDigest(store.digest, chain.digests[block]!)) {
      violate("state", `the store after block ${block} differs from the primary's state`)
      stopped = true
    }
  }

  const perform = (l: Life, output: FollowerOutput) => {
    switch (output._tag) {
      case "Fetch":
        log(`fetch from ${output.from}`)
        l.subscription = { pos: output.from }
        return pump()
      case "Credit":
        l.credit = output.until
        return pump()
      case "ArmTimer":
        return clock.after(output.afterMs, {
          kind: "input",
          life: l.id,
          input: { _tag: output.timer === "hint" ? "HintTimeout" : "GapTimeout", block: output.block }
        })
      case "Prefetch":
        return clock.after(0.5 + rng.next() * 8, {
          kind: "prefetched",
          life: l.id,
          batch: output.batch,
          plan: output.plan
        })
      case "Execute": {
        const { block } = output
        if (block.number !== l.nextToRun) {
          violate("order", `ran block ${block.number} while block ${l.nextToRun} was next`)
          stopped = true
          return
        }
        const onDemand = new SimOnDemand(store, store.head, l.pending, chain.codes)
        let pre: PreState = onDemand
        let prefetchedState: PrefetchedState | undefined
        if (output.mode === "prefetched") {
          const batch = l.prefetched.get(output.batch)
          if (batch === undefined) {
            violate("order", `ran block ${block.number} before its batch ${output.batch} was prefetched`)
            stopped = true
            return
          }
          prefetchedState = new PrefetchedState(
            batch.caches[output.index]!,
            batch.code,
            batch.head,
            onDemand,
            l.pending
          )
          pre = prefetchedState
        }
        const outcome = executeBlock(block.number, block.txs, chain.context, pre)
        stats.executions++
        if (prefetchedState !== undefined) stats.misses += prefetchedState.counts.misses
        l.running = { number: block.number, changes: outcome.changes }
        log(
          `execute ${block.number} (${output.mode}${output.mode === "prefetched" ? `, hint ${hintKinds.get(block.number) ?? "none"}` : ""})`
        )
        return clock.after(0.5 + rng.next() * 2, {
          kind: "input",
          life: l.id,
          input: { _tag: "Executed", block: block.number, mode: output.mode, stateHash: outcome.stateHash }
        })
      }
      case "Persist": {
        const changes = l.running?.number === output.block ? l.running.changes : []
        l.pending.record(output.block, changes)
        l.commits.push({ block: output.block, changes })
        // Commits are written one after another.
        l.lastCommitAt = Math.max(l.lastCommitAt, clock.now) + 0.3 + rng.next() * 3
        return clock.after(l.lastCommitAt - clock.now, { kind: "commit", life: l.id, block: output.block })
      }
      case "ReleaseBatch":
        l.prefetched.delete(output.batch)
        return l.pending.prune(output.visible)
      case "Report": {
        const { verdict } = output
        const real = chain.blocks[verdict.number - 1]!.stateHash
        if (!sameHash(verdict.stateHash, real)) {
          violate("verified-wrong", `verified block ${verdict.number} with a state hash that is not the primary's`)
        }
        l.nextToRun = verdict.number + 1
        stats.blocks++
        if (verdict.hintRejected) stats.hintsRejected++
        if (verdict.hintFailure !== undefined) stats.hintFailures++
        return log(`verified ${verdict.number}${verdict.hintRejected ? " (hint rejected)" : ""}`)
      }
      case "Diverged":
        log(`diverged at ${output.block}`)
        if (output.block !== forged)
          violate(
            "false-divergence",
            `reported divergence at block ${output.block}, whose published hash is the primary's`
          )
        divergedAt = output.block
        return
      case "Done":
        return
    }
  }

  const feed = (input: FollowerInput) => {
    const l = life
    if (l === undefined || stopped) return
    const result = step(l.core, input)
    l.core = result.state
    for (const output of result.out) {
      if (stopped) return
      perform(l, output)
    }
  }

  const crash = () => {
    const l = life
    if (l === undefined) return
    stats.crashes++
    stats.refetches += l.core.counters.refetches
    stats.duplicates += l.core.counters.duplicates
    // Commits in flight: a prefix of them reached the disk.
    let durable = 0
    while (durable < l.commits.length && rng.next() < 0.5) durable++
    for (const commit of l.commits.slice(0, durable)) if (!stopped) persistToStore(commit.block, commit.changes)
    log(`crash of incarnation ${l.id} (${durable} of ${l.commits.length} commits in flight made it)`)
    life = undefined
  }

  // The primary produces, the backup starts, polls the primary's head, crashes and restarts.
  clock.after(BLOCK_INTERVAL_MS, { kind: "produce" })
  clock.after(POLL_MS, { kind: "poll" })
  const crashes = rng.int(scenario.maxCrashes + 1)
  for (let c = 0; c < crashes; c++) clock.after(rng.next() * faultsEndMs, { kind: "crash" })
  begin()

  for (let event = clock.next(); event !== undefined && !stopped && clock.now <= endMs; event = clock.next()) {
    switch (event.kind) {
      case "produce":
        if (produced < last) produced++
        pump()
        if (produced < last) clock.after(BLOCK_INTERVAL_MS, { kind: "produce" })
        break
      case "poll":
        feed({ _tag: "PrimaryHead", head: Math.min(produced, last) })
        clock.after(POLL_MS, { kind: "poll" })
        break
      case "crash":
        if (life !== undefined) {
          crash()
          clock.after(5 + rng.next() * 200, { kind: "restart" })
        }
        break
      case "restart":
        if (life === undefined) begin()
        break
      case "input":
        if (life?.id === event.life) feed(event.input)
        break
      case "prefetched": {
        const l = life
        if (l?.id !== event.life) break
        // The readers' snapshot: the store as it is now; zero keys are not read at all.
        const values = event.plan.keys.map((key, i) => (event.plan.sources[i] === Source.Zero ? 0 : store.read(key)))
        const caches = blockCaches(event.plan, values)
        const code = new Map<Address, Uint8Array>()
        for (const address of event.plan.code) {
          const bytes = chain.codes.get(address)
          if (bytes !== undefined) code.set(address, bytes)
        }
        l.prefetched.set(event.batch, { caches, code, head: store.head })
        feed({ _tag: "Prefetched", batch: event.batch, snapshotHead: store.head })
        break
      }
      case "commit": {
        const l = life
        if (l?.id !== event.life) break
        const commit = l.commits.shift()
        if (commit?.block !== event.block) {
          violate("order", `commit of block ${event.block} out of order`)
          stopped = true
          break
        }
        persistToStore(commit.block, commit.changes)
        feed({ _tag: "Persisted", block: commit.block })
        break
      }
    }
  }
  if (life !== undefined) {
    stats.refetches += life.core.counters.refetches
    stats.duplicates += life.core.counters.duplicates
  }

  if (!stopped) {
    if (forged === undefined) {
      if (store.head !== last)
        violate("liveness", `the store is at block ${store.head}, the primary at ${last}, after the faults stopped`)
    } else {
      if (divergedAt !== forged) violate("liveness", `never stopped at the forged block ${forged}`)
      if (store.head !== forged - 1)
        violate(
          "liveness",
          `the store is at block ${store.head}; every block before the forged ${forged} should be there`
        )
    }
    const honestOnly = Object.keys(scenario.hints).every((k) => k === "honest") && scenario.hintLoss === 0
    if (honestOnly && stats.misses > 0)
      violate("honest-hints", `honest hints left ${stats.misses} reads to the on-demand path`)
  }
  return { seed, scenario: scenario.name, violations, stats, trace }
}
