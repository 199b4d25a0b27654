/**
 * The simulator's storage: one in-memory segment store shared by every simulated client, seen by each
 * through a faulty view. A view delays calls (on the simulated clock), fails some before they happen, makes
 * some ambiguous (the call happens, the client is told it timed out), and crashes its client at chosen
 * moments: while an append is in flight, right after a begin-snapshot or another state record lands, and in
 * the middle of writing a snapshot. The storage also probes the timely-snapshot invariant on every command
 * entry that lands, against the chain the state log holds at that moment.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
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
}

export const NO_FAULTS: FaultPlan = {
  delayMs: [0, 1],
  failBefore: 0,
  ambiguous: 0,
  crashInAppend: 0,
  crashAfterStateRecord: 0,
  crashInSnapshot: 0
}

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

  /** The view of client `name`: `crash` is completed when the storage decides that client dies. */
  viewFor(crash: Deferred.Deferred<void>): SegmentStoreShape {
    const self = this
    const plain = this.plain
    const delay = Effect.flatMap(
      Effect.suspend(() => self.random.nextIntBetween(self.faults.delayMs[0], self.faults.delayMs[1] + 1)),
      (ms) => Effect.sleep(ms)
    )
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
      Effect.gen(function* () {
        yield* delay
        if (yield* self.chance(self.faults.failBefore)) {
          self.failedCalls++
          return yield* Effect.fail(new SegmentUnavailable({ segment, operation, reason: "simulated storage failure" }))
        }
        const result = yield* call
        if (landed !== undefined) yield* landed(result)
        yield* delay
        if (yield* self.chance(self.faults.ambiguous)) {
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
