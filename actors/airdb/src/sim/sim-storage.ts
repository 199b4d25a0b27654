/**
 * The simulator's storage: one in-memory segment store shared by every simulated client, seen by each
 * through a faulty view. A view delays calls (on the simulated clock), fails some before they happen, makes
 * some ambiguous (the call happens, the client is told it timed out), and crashes its client at chosen
 * moments: while an append is in flight, right after a begin-snapshot or another state record lands, and in
 * the middle of writing a snapshot. The storage also probes the timely-snapshot invariant on every command
 * entry that lands, against the chain the state log holds at that moment.
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import type * as Random from "effect/Random"
import { chainEnd } from "../core/chain.js"
import type { StoreConfig } from "../core/coordination.js"
import { maxPendingEntries } from "../core/timely.js"
import { CorruptRecord, decodeCommandEntry, decodeStateRecord } from "../log/record-codec.js"
import { MemorySegments, makeMemorySegmentStore } from "../segment/memory.js"
import { type SegmentStoreShape, SegmentTimeout, SegmentUnavailable } from "../segment/segment.js"

export interface FaultPlan {
  /** Simulated milliseconds a storage call takes, drawn uniformly. */
  readonly delayMs: readonly [number, number]
  /** Probability that a call fails before it happens. */
  readonly failBefore: number
  /** Probability that a call happens but its client hears a timeout. */
  readonly ambiguous: number
  /** Probability that a client crashes while its append is in flight (before or after it lands). */
  readonly crashInAppend: number
  /** Probability that a client crashes right after one of its state records (a begin-snapshot) lands. */
  readonly crashAfterStateRecord: number
  /** Probability that a client crashes right after writing a snapshot block. */
  readonly crashInSnapshot: number
  /** A client's process stops (SIGSTOP) now and then: none of its calls go out or come back meanwhile. */
  readonly pauses?: FaultWindows
  /** The storage server stalls (SIGSTOP of the server): every call waits until it resumes. */
  readonly stalls?: FaultWindows
  /** The storage server is down (kill -9, then restarted): calls fail, those in flight time out. */
  readonly outages?: FaultWindows
}

/** Faults that come and go: one starts every `everyMs` (drawn uniformly) and lasts `forMs`. */
export interface FaultWindows {
  readonly everyMs: readonly [number, number]
  readonly forMs: readonly [number, number]
}

/** One client's pause state (it survives the client's restarts: it belongs to the process). */
export interface PauseHandle {
  until: number
}

export const NO_FAULTS: FaultPlan = {
  delayMs: [0, 1],
  failBefore: 0,
  ambiguous: 0,
  crashInAppend: 0,
  crashAfterStateRecord: 0,
  crashInSnapshot: 0
}

/** A client's deadline on one storage call (simulated ms): only stalls and pauses outlast it. */
const CALL_DEADLINE_MS = 1_000

export interface Violation {
  readonly property: string
  readonly detail: string
}

export class SimStorage {
  readonly contents = new MemorySegments()
  private readonly plain = makeMemorySegmentStore(this.contents)
  faults: FaultPlan
  /** End of the newest chain the state log holds (what every client will eventually adopt). */
  private chainEndInStorage = 0
  private config: StoreConfig | undefined
  readonly violations: Array<Violation> = []
  maxPendingSeen = 0
  crashes = 0
  ambiguousCalls = 0
  failedCalls = 0
  pauses = 0
  stalls = 0
  outages = 0
  private stalledUntil = 0
  private downUntil = 0

  constructor(
    readonly store: string,
    faults: FaultPlan,
    private readonly random: Random.Random
  ) {
    this.faults = faults
  }

  private chance(p: number): Effect.Effect<boolean> {
    return p <= 0 ? Effect.succeed(false) : Effect.map(this.random.next, (x) => x < p)
  }

  /** Watches what lands: the store's config, chain records, and each command entry against the invariant. */
  private observe(segment: string, bytes: Uint8Array): void {
    if (segment.startsWith(`${this.store}-s-`) && !/-m\d+$/.test(segment)) {
      const record = decodeStateRecord(bytes, segment, 0)
      if (record instanceof CorruptRecord) return
      if (record._tag === "Config") this.config ??= record.config
      if (record._tag === "Chain") this.chainEndInStorage = Math.max(this.chainEndInStorage, chainEnd(record.chain))
      return
    }
    if (segment.startsWith(`${this.store}-c-`) && !/-m\d+$/.test(segment) && this.config !== undefined) {
      const entry = decodeCommandEntry(bytes, segment, 0)
      if (entry instanceof CorruptRecord) return
      const pending = entry.index + 1 - this.chainEndInStorage
      this.maxPendingSeen = Math.max(this.maxPendingSeen, pending)
      const bound = maxPendingEntries(this.config.timely)
      if (pending > bound) {
        this.violations.push({
          property: "timely-snapshot",
          detail: `entry ${entry.index} landed with n − i_k = ${pending} > (1+ε)B = ${bound} (chain end ${this.chainEndInStorage})`
        })
      }
    }
  }

  /** Draws when the next window of a kind starts and how long it lasts, until faults are switched off. */
  private windows(kind: "pauses" | "stalls" | "outages", open: (until: number) => void): Effect.Effect<void> {
    const self = this
    return Effect.gen(function* () {
      for (;;) {
        const plan = self.faults[kind]
        if (plan === undefined) return
        yield* Effect.sleep(yield* self.random.nextIntBetween(plan.everyMs[0], plan.everyMs[1] + 1))
        if (self.faults[kind] === undefined) return
        const length = yield* self.random.nextIntBetween(plan.forMs[0], plan.forMs[1] + 1)
        self[kind]++
        open((yield* Clock.currentTimeMillis) + length)
      }
    })
  }

  /** Storage stalls and outages, for as long as the fault plan has them (run beside the workload). */
  get storageFaults(): Effect.Effect<void> {
    return Effect.asVoid(
      Effect.all(
        [
          this.windows("stalls", (until) => {
            this.stalledUntil = until
          }),
          this.windows("outages", (until) => {
            this.downUntil = until
          })
        ],
        { concurrency: "unbounded" }
      )
    )
  }

  /** SIGSTOPs of one client process, for as long as the fault plan has them. */
  clientPauses(pause: PauseHandle): Effect.Effect<void> {
    return this.windows("pauses", (until) => {
      pause.until = until
    })
  }

  /** Heals every fault for good (the checks after the run). */
  heal(): void {
    this.faults = NO_FAULTS
    this.stalledUntil = 0
    this.downUntil = 0
  }

  /** The view of client `name`: `crash` is completed when the storage decides that client dies. */
  viewFor(crash: Deferred.Deferred<void>, pause: PauseHandle = { until: 0 }): SegmentStoreShape {
    const self = this
    const plain = this.plain
    const delay = Effect.flatMap(
      Effect.suspend(() => self.random.nextIntBetween(self.faults.delayMs[0], self.faults.delayMs[1] + 1)),
      (ms) => Effect.sleep(ms)
    )
    /** Waits while this client is paused or the storage stalled (a call neither goes out nor comes back). */
    const held: Effect.Effect<void> = Effect.gen(function* () {
      for (;;) {
        const now = yield* Clock.currentTimeMillis
        const until = Math.max(pause.until, self.stalledUntil)
        if (until <= now) return
        yield* Effect.sleep(until - now)
      }
    })
    const isDown = Effect.map(Clock.currentTimeMillis, (now) => now < self.downUntil)
    const crashNow = Effect.zipRight(
      Effect.sync(() => self.crashes++),
      Effect.zipRight(Deferred.succeed(crash, undefined), Effect.never)
    )
    const faulty = <A, E>(
      segment: string,
      operation: string,
      call: Effect.Effect<A, E>,
      landed?: (a: A) => Effect.Effect<void>
    ) =>
      // The call runs on its own: past the client's deadline the client hears a timeout, and a call held by a
      // stall or a pause still happens when it ends (a late append, a late read), as with a real server.
      Effect.flatMap(Effect.forkDaemon(attempt(segment, operation, call, landed)), (fiber) =>
        Effect.flatMap(Effect.timeoutOption(Fiber.join(fiber), CALL_DEADLINE_MS), (done) => {
          if (Option.isSome(done)) return Effect.succeed(done.value)
          self.ambiguousCalls++
          return Effect.fail(new SegmentTimeout({ segment, operation, timeoutMs: CALL_DEADLINE_MS }))
        })
      )
    const attempt = <A, E>(
      segment: string,
      operation: string,
      call: Effect.Effect<A, E>,
      landed?: (a: A) => Effect.Effect<void>
    ) =>
      Effect.gen(function* () {
        yield* held
        yield* delay
        yield* held
        if ((yield* isDown) || (yield* self.chance(self.faults.failBefore))) {
          self.failedCalls++
          return yield* Effect.fail(new SegmentUnavailable({ segment, operation, reason: "simulated storage failure" }))
        }
        const result = yield* call
        if (landed !== undefined) yield* landed(result)
        yield* delay
        yield* held
        if ((yield* isDown) || (yield* self.chance(self.faults.ambiguous))) {
          self.ambiguousCalls++
          return yield* Effect.fail(new SegmentTimeout({ segment, operation, timeoutMs: 0 }))
        }
        return result
      })
    return {
      backend: "memory",
      limits: plain.limits,
      create: (segment) => faulty(segment, "create", plain.create(segment)),
      append: (segment, expectedTail, bytes) =>
        Effect.gen(function* () {
          if (yield* self.chance(self.faults.crashInAppend / 2)) return yield* Effect.zipRight(delay, crashNow)
          return yield* faulty(segment, "append", plain.append(segment, expectedTail, bytes), () =>
            Effect.gen(function* () {
              self.observe(segment, bytes)
              const isState = segment.startsWith(`${self.store}-s-`)
              const isSnapshot = segment.startsWith(`${self.store}-snap-`)
              // Landed, then the client dies before it hears so.
              if (yield* self.chance(self.faults.crashInAppend / 2)) yield* crashNow
              if (isState && (yield* self.chance(self.faults.crashAfterStateRecord))) yield* crashNow
              if (isSnapshot && (yield* self.chance(self.faults.crashInSnapshot))) yield* crashNow
            })
          )
        }),
      read: (segment, from, options) => faulty(segment, "read", plain.read(segment, from, options)),
      size: (segment) => faulty(segment, "size", plain.size(segment)),
      remove: (segment) => faulty(segment, "remove", plain.remove(segment))
    }
  }

  /** A view without faults (the checker's reference replay). */
  get reliable(): SegmentStoreShape {
    return this.plain
  }
}
