import { type Hint, KEY_BYTES, Source } from "@reef/chain/core"
import { describe, expect, it } from "vitest"
import {
  createFollower,
  defaultFollowerParams,
  type FollowerInput,
  type FollowerOutput,
  type FollowerParams,
  type FollowerState,
  type StreamBlock,
  stepFollower
} from "./follower.js"

const hashOf = (n: number) => Uint8Array.of(n & 0xff, n >> 8, 7)
const block = (n: number): StreamBlock => ({ number: n, txs: [], stateHash: hashOf(n) })
const keyOf = (n: number) => String.fromCharCode(n).padEnd(KEY_BYTES, "k")
const hint = (n: number): Hint => ({ block: n, storage: [keyOf(n)], sources: Uint8Array.of(Source.Plain), code: [] })

/** A follower driven by hand: `feed` steps it and keeps every output. */
const follower = (overrides: Partial<FollowerParams> = {}, head = 0) => {
  let state: FollowerState = createFollower(
    defaultFollowerParams({ batchBlocks: 4, hintWaitMs: 50, gapWaitMs: 500, ...overrides }),
    head
  )
  const feed = (...inputs: ReadonlyArray<FollowerInput>): Array<FollowerOutput> => {
    const out: Array<FollowerOutput> = []
    for (const input of inputs) {
      const step = stepFollower(state, input)
      state = step.state
      out.push(...step.out)
    }
    return out
  }
  return { feed, state: () => state }
}

const tags = (out: ReadonlyArray<FollowerOutput>) => out.map((o) => o._tag)
const arrive = (n: number, withHint = true): Array<FollowerInput> => [
  ...(withHint ? [{ _tag: "HintArrived", block: n, hint: hint(n) } as const] : []),
  { _tag: "BlockArrived", block: block(n) }
]
const of = <T extends FollowerOutput["_tag"]>(out: ReadonlyArray<FollowerOutput>, tag: T) =>
  out.filter((o): o is Extract<FollowerOutput, { _tag: T }> => o._tag === tag)

describe("the follower core", () => {
  it("starts reading the stream after its store's head and grants a window of credit", () => {
    const f = follower({}, 41)
    expect(f.feed({ _tag: "Start" })).toEqual([
      { _tag: "Fetch", from: 42 },
      { _tag: "Credit", until: 42 + 16 }
    ])
  })

  it("cuts a partial batch when idle, full batches when busy, and executes blocks in order", () => {
    const f = follower()
    f.feed({ _tag: "Start" })
    // Idle: block 1 alone is a batch (no reason to wait for more).
    const first = f.feed(...arrive(1))
    expect(of(first, "Prefetch").map((p) => p.plan.blocks.map((b) => b.number))).toEqual([[1]])
    // Busy: 2..5 wait to fill a batch of 4.
    expect(tags(f.feed(...arrive(2), ...arrive(3), ...arrive(4)))).not.toContain("Prefetch")
    const full = f.feed(...arrive(5))
    expect(of(full, "Prefetch").map((p) => p.plan.blocks.map((b) => b.number))).toEqual([[2, 3, 4, 5]])
    // Execution waits for the prefetch, then goes block by block, each verified before the next.
    expect(tags(f.feed({ _tag: "Prefetched", batch: 1, snapshotHead: 0 }))).toEqual([])
    const run1 = f.feed({ _tag: "Prefetched", batch: 0, snapshotHead: 0 })
    expect(of(run1, "Execute").map((e) => [e.block.number, e.mode])).toEqual([[1, "prefetched"]])
    const after1 = f.feed({ _tag: "Executed", block: 1, mode: "prefetched", stateHash: hashOf(1) })
    expect(tags(after1)).toEqual(["Persist", "Report", "ReleaseBatch", "Execute"])
    expect(of(after1, "Execute")[0]!.block.number).toBe(2)
    expect(f.state().verified).toBe(1)
  })

  it("a block waits for its hint, then runs without it after hintWaitMs", () => {
    const f = follower()
    f.feed({ _tag: "Start" })
    const out = f.feed(...arrive(1, false))
    expect(of(out, "ArmTimer")).toEqual([{ _tag: "ArmTimer", timer: "hint", block: 1, afterMs: 50 }])
    expect(tags(out)).not.toContain("Prefetch")
    const timedOut = f.feed({ _tag: "HintTimeout", block: 1 })
    expect(of(timedOut, "Prefetch")[0]!.plan.blocks[0]!.hintError).toBe("missing")
  })

  it("behind the primary's head a block waits longer for its hint: it is in the stream, only not read yet", () => {
    // A late backup: the primary is at 90. Its block stream ran ahead of its hint stream, and with hintWaitMs
    // it replayed such blocks without hints and counted them as hint errors against an honest primary.
    const f = follower({ catchUpHintWaitMs: 4000 })
    f.feed({ _tag: "Start" }, { _tag: "PrimaryHead", head: 90 })
    const behind = f.feed(...arrive(1, false))
    expect(of(behind, "ArmTimer")).toEqual([{ _tag: "ArmTimer", timer: "hint", block: 1, afterMs: 4000 }])
    // The hint comes, late: the block is prefetched with it.
    const late = f.feed({ _tag: "HintArrived", block: 1, hint: hint(1) })
    expect(of(late, "Prefetch")[0]!.plan.blocks[0]!.hintError).toBeUndefined()
    // At the head, the short wait: the hint may never have been published.
    const g = follower({ catchUpHintWaitMs: 4000 })
    g.feed({ _tag: "Start" }, { _tag: "PrimaryHead", head: 1 })
    expect(of(g.feed(...arrive(1, false)), "ArmTimer")[0]!.afterMs).toBe(50)
  })

  it("a refused hint costs its block the prefetch; a second hint for a block is ignored", () => {
    const f = follower()
    f.feed({ _tag: "Start" })
    const out = f.feed(
      { _tag: "HintArrived", block: 1, hint: { error: "bad-magic" } },
      { _tag: "HintArrived", block: 1, hint: hint(1) },
      { _tag: "BlockArrived", block: block(1) }
    )
    expect(of(out, "Prefetch")[0]!.plan.blocks[0]!.hintError).toBe("bad-magic")
    expect(f.state().counters.ignoredHints).toBe(1)
    // A hint naming another block is refused as such.
    const g = follower()
    g.feed({ _tag: "Start" })
    const other = g.feed({ _tag: "HintArrived", block: 1, hint: hint(9) }, { _tag: "BlockArrived", block: block(1) })
    expect(of(other, "Prefetch")[0]!.plan.blocks[0]!.hintError).toBe("block-mismatch")
  })

  it("a hinted run that differs is run again on demand; the hint is reported rejected", () => {
    const f = follower()
    f.feed({ _tag: "Start" }, ...arrive(1), { _tag: "Prefetched", batch: 0, snapshotHead: 0 })
    const retry = f.feed({ _tag: "Executed", block: 1, mode: "prefetched", stateHash: hashOf(99) })
    expect(retry).toEqual([expect.objectContaining({ _tag: "Execute", mode: "on-demand" })])
    const ok = f.feed({ _tag: "Executed", block: 1, mode: "on-demand", stateHash: hashOf(1) })
    expect(of(ok, "Report")[0]!.verdict).toMatchObject({ number: 1, hintRejected: true })
    expect(f.state().counters.hintsRejected).toBe(1)
  })

  it("stops loudly when a run without a usable hint differs, and persists nothing of that block", () => {
    const f = follower()
    f.feed({ _tag: "Start" }, ...arrive(1, false), { _tag: "HintTimeout", block: 1 })
    f.feed({ _tag: "Prefetched", batch: 0, snapshotHead: 0 })
    const out = f.feed({ _tag: "Executed", block: 1, mode: "prefetched", stateHash: hashOf(99) })
    expect(tags(out)).toEqual(["Diverged"])
    expect(f.state().phase).toBe("diverged")
    expect(f.feed(...arrive(2), { _tag: "Prefetched", batch: 1, snapshotHead: 0 })).toEqual([])
    // On demand too: a hinted block whose re-run differs again.
    const g = follower()
    g.feed({ _tag: "Start" }, ...arrive(1), { _tag: "Prefetched", batch: 0, snapshotHead: 0 })
    g.feed({ _tag: "Executed", block: 1, mode: "prefetched", stateHash: hashOf(99) })
    expect(tags(g.feed({ _tag: "Executed", block: 1, mode: "on-demand", stateHash: hashOf(98) }))).toEqual(["Diverged"])
  })

  it("drops duplicates and blocks past its window, and re-reads the stream from a block that did not come", () => {
    const f = follower()
    f.feed({ _tag: "Start" }, ...arrive(1))
    f.feed(...arrive(1))
    expect(f.state().counters.duplicates).toBe(1)
    // Block 3 arrives, 2 does not: a gap timer for 2, then a fetch from 2.
    const gap = f.feed(...arrive(3))
    expect(of(gap, "ArmTimer").filter((t) => t.timer === "gap")).toEqual([
      { _tag: "ArmTimer", timer: "gap", block: 2, afterMs: 500 }
    ])
    expect(f.feed({ _tag: "GapTimeout", block: 2 })).toContainEqual({ _tag: "Fetch", from: 2 })
    // It arrived meanwhile: a late timer changes nothing.
    f.feed(...arrive(2))
    expect(of(f.feed({ _tag: "GapTimeout", block: 2 }), "Fetch")).toEqual([])
    f.feed(...arrive(40))
    expect(f.state().counters.outOfWindow).toBe(1)
  })

  it("a primary head beyond what arrived is a gap too", () => {
    const f = follower()
    f.feed({ _tag: "Start" })
    expect(of(f.feed({ _tag: "PrimaryHead", head: 5 }), "ArmTimer")).toEqual([
      { _tag: "ArmTimer", timer: "gap", block: 1, afterMs: 500 }
    ])
  })

  it("holds execution while too many verified blocks wait for the store", () => {
    const f = follower({ maxUnpersisted: 2 })
    f.feed({ _tag: "Start" }, ...arrive(1), { _tag: "Prefetched", batch: 0, snapshotHead: 0 })
    f.feed(...[2, 3, 4, 5].flatMap((n) => arrive(n)), { _tag: "Prefetched", batch: 1, snapshotHead: 0 })
    f.feed({ _tag: "Executed", block: 1, mode: "prefetched", stateHash: hashOf(1) })
    const second = f.feed({ _tag: "Executed", block: 2, mode: "prefetched", stateHash: hashOf(2) })
    expect(tags(second)).not.toContain("Execute")
    expect(of(f.feed({ _tag: "Persisted", block: 1 }), "Execute")[0]!.block.number).toBe(3)
  })

  it("a restarted follower resumes after what its store holds, not after what it verified", () => {
    const f = follower()
    f.feed({ _tag: "Start" }, ...arrive(1), ...arrive(2), { _tag: "Prefetched", batch: 0, snapshotHead: 0 })
    f.feed({ _tag: "Executed", block: 1, mode: "prefetched", stateHash: hashOf(1) }, { _tag: "Persisted", block: 1 })
    expect(f.state()).toMatchObject({ persisted: 1, verified: 1 })
    // A new incarnation on the same store: block 2 was never persisted.
    const again = follower({}, f.state().persisted)
    expect(of(again.feed({ _tag: "Start" }), "Fetch")).toEqual([{ _tag: "Fetch", from: 2 }])
  })

  it("archive replay: ends after the source's last block, persisting nothing", () => {
    const f = follower({ persist: false })
    f.feed({ _tag: "Start" }, ...arrive(1), ...arrive(2), { _tag: "StreamEnded" })
    f.feed({ _tag: "Prefetched", batch: 0, snapshotHead: 0 }, { _tag: "Prefetched", batch: 1, snapshotHead: 0 })
    const out = f.feed(
      { _tag: "Executed", block: 1, mode: "prefetched", stateHash: hashOf(1) },
      { _tag: "Executed", block: 2, mode: "prefetched", stateHash: hashOf(2) }
    )
    expect(tags(out)).not.toContain("Persist")
    expect(tags(out).at(-1)).toBe("Done")
    expect(f.state().phase).toBe("done")
  })

  it("reports lag against the primary's head and turns following when caught up", () => {
    const f = follower()
    f.feed({ _tag: "Start" }, { _tag: "PrimaryHead", head: 3 }, ...arrive(1), {
      _tag: "Prefetched",
      batch: 0,
      snapshotHead: 0
    })
    const out = f.feed({ _tag: "Executed", block: 1, mode: "prefetched", stateHash: hashOf(1) })
    expect(of(out, "Report")[0]!.verdict.lag).toBe(2)
    expect(f.state().phase).toBe("catching-up")
  })
})
