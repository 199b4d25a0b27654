/**
 * Issue 23's empty linearizable `Get`, reproduced deterministically. A reader holds key k in its tail (written
 * after its snapshot chain's end) and k's snapshot block is not cached, so its `Get` starts a speculative
 * snapshot read before riding the bus. Meanwhile the reader's snapshotter is about to adopt a newer chain that
 * covers k's write (adopting rebases the tail: k leaves it). The old `Get` found k in the tail after the bus,
 * stopped the speculative read, and looked the tail up again: when the adoption ran in between, it answered
 * "not found" for a key holding a value.
 *
 * The run is on the simulator's runtime with a seeded random order of ready fibers (an event loop's freedom):
 * the reader's tail sync wakes both the `Get` and the snapshotter, which adopts the newer chain within a few
 * turns. Each schedule seed is one deterministic interleaving; the test runs 40 and requires every `Get` to
 * see k's value. On the old client schedule seed 16 answered "not found" at snapshot 17.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { describe, expect, it } from "vitest"
import { MemorySegments, makeMemorySegmentStore } from "../segment/memory.js"
import type { SegmentStoreShape } from "../segment/segment.js"
import { runSimulated } from "../sim/sim-runtime.js"
import { openClient } from "./client.js"
import type { AirDbOptions } from "./options.js"

const enc = (s: string) => new TextEncoder().encode(s)
const dec = (b: Uint8Array | undefined) => (b === undefined ? undefined : new TextDecoder().decode(b))

const options = (clientId: string): AirDbOptions => ({
  store: "t",
  clientId,
  create: {
    conflictWindow: 64,
    timely: { snapshotEvery: 4, epsilon: 0.5 },
    snapshotTtlMs: 2000,
    layout: { commandSegmentRecords: 1000, stateSegmentRecords: 1000, metaSegmentRecords: 16 }
  },
  minSyncGapMs: 0,
  blockBytes: 64,
  gcGraceMs: 60_000
})

const isBlockRead = (segment: string, maxRecords: number | undefined) => segment.includes("-snap-") && maxRecords === 1
const isCommandRead = (segment: string) => segment.startsWith("t-c-") && !/-m\d+$/.test(segment)

interface Gates {
  armed: boolean
  readonly blocks: Deferred.Deferred<void>
}

/**
 * The reader's store. Once `armed`: command-log reads take a turn of the event loop (the tail sync is I/O),
 * snapshot block reads wait until `blocks` opens (after the adoption: the `Get` must not depend on them), and
 * the rest answers at once (so an adoption, once its fiber runs, completes within a few turns).
 */
const coupled = (store: SegmentStoreShape, gates: Gates) =>
  ({
    ...store,
    read: (segment, from, o) =>
      Effect.gen(function* () {
        if (!gates.armed || isCommandRead(segment)) yield* Effect.sleep(0)
        if (gates.armed && isBlockRead(segment, o?.maxRecords)) yield* Deferred.await(gates.blocks)
        return yield* store.read(segment, from, o)
      }),
    append: (segment, tail, bytes) => Effect.zipRight(Effect.sleep(0), store.append(segment, tail, bytes)),
    size: (segment) => Effect.zipRight(Effect.sleep(0), store.size(segment))
  }) satisfies SegmentStoreShape

const until = (condition: () => boolean, poke: Effect.Effect<unknown, unknown> = Effect.void) =>
  Effect.gen(function* () {
    while (!condition()) {
      yield* Effect.ignore(poke)
      yield* Effect.sleep(2)
    }
  })

interface Answer {
  readonly value: string | undefined
  readonly snapshot: number
  readonly kEntry: number
}

/**
 * One interleaving: what the reader's `Get` of k answered (`answered`, as soon as it answers: the clients'
 * shutdown afterwards is not what this test is about, and a storage read held forever may hold it up).
 */
const race = (answered: (a: Answer) => void) =>
  Effect.scoped(
    Effect.gen(function* () {
      const contents = new MemorySegments()
      const writer = yield* openClient(makeMemorySegmentStore(contents), options("writer"))
      // Chain C1 holds keys before "k" (so k's lookup needs a block), then k is written after C1's end.
      for (let i = 0; i < 6; i++) yield* writer.put(`a${i}`, enc(`a${i}`))
      yield* until(() => writer.stats().chainEnd >= 4, writer.sync)
      yield* writer.put("k", enc("value-of-k"))
      const kEntry = writer.stats().entries - 1

      const gates: Gates = { armed: false, blocks: yield* Deferred.make<void>() }
      const reader = yield* openClient(coupled(makeMemorySegmentStore(contents), gates), options("reader"))
      if (reader.stats().chainEnd > kEntry) return yield* Effect.dieMessage("the reader started past k's write")
      // Chain C2 covers k's write; the reader has not read the state log since it opened.
      for (let i = 0; i < 10; i++) yield* writer.put(`b${i}`, enc(`b${i}`))
      yield* until(() => writer.stats().chainEnd > kEntry, writer.sync)

      gates.armed = true
      yield* Effect.forkScoped(
        Effect.zipRight(
          until(() => reader.stats().chainEnd > kEntry),
          Deferred.succeed(gates.blocks, undefined)
        )
      )
      const r = yield* reader.get("k")
      answered({ value: dec(r.value), snapshot: r.snapshot, kEntry })
    })
  )

describe("a Get racing a chain adoption (issue 23)", () => {
  it("answers the key's value, never 'not found', whatever the interleaving", () => {
    const wrong: Array<string> = []
    for (let seed = 1; seed <= 40; seed++) {
      let answer: Answer | undefined
      const outcome = runSimulated(
        race((a) => {
          answer = a
        }),
        600_000,
        seed
      )
      if (answer === undefined) {
        const why = outcome._tag === "Done" && Exit.isFailure(outcome.exit) ? String(outcome.exit.cause) : outcome._tag
        wrong.push(`schedule seed ${seed}: no answer (${why})`)
        continue
      }
      const { value, snapshot, kEntry } = answer
      if (value !== "value-of-k" || snapshot <= kEntry) {
        wrong.push(`schedule seed ${seed}: Get answered ${JSON.stringify(value)} at snapshot ${snapshot}`)
      }
    }
    expect(wrong).toEqual([])
  }, 120_000)
})
