import { describe, expect, it } from "vitest"
import type { Decision } from "./consensus-source.js"
import { SlotSequencer } from "./popuc-consensus.js"
import { WindowConsensus, WindowSchedule } from "./window-consensus.js"

const collect = (source: WindowConsensus) => {
  const decisions: Array<Decision> = []
  source.listen((d) => decisions.push(d))
  return decisions
}

const waitFor = async (predicate: () => boolean, ms = 5_000) => {
  const until = Date.now() + ms
  while (!predicate() && Date.now() < until) await new Promise((r) => setTimeout(r, 5))
}

describe("the window consensus source", () => {
  it('commits each proposal once, after its window ("a constant delay of 300ms", configurable)', async () => {
    const source = new WindowConsensus({ windowMs: 20, rejectRate: 0, reorderRate: 0, seed: 1 })
    const decisions = collect(source)
    const started = Date.now()
    for (let p = 1; p <= 3; p++) source.propose({ proposal: p, digest: "d", txs: 1 })
    await waitFor(() => decisions.length === 3)
    expect(Date.now() - started).toBeGreaterThanOrEqual(15)
    expect(decisions).toEqual([1, 2, 3].map((proposal) => ({ _tag: "Commit", proposal })))
    source.close()
  })

  it("rejects and reorders the share of proposals it is told to, the same way for the same seed", async () => {
    const run = async () => {
      const source = new WindowConsensus({ windowMs: 5, rejectRate: 0.2, reorderRate: 0.3, seed: 42 })
      const decisions = collect(source)
      for (let p = 1; p <= 40; p++) {
        source.propose({ proposal: p, digest: "d", txs: 1 })
        await new Promise((r) => setTimeout(r, 1))
      }
      await waitFor(() => decisions.length === 40)
      source.close()
      return decisions
    }
    const decisions = await run()
    expect(new Set(decisions.map((d) => d.proposal)).size).toBe(40)
    expect(decisions.some((d) => d._tag === "Reject")).toBe(true)
    const commits = decisions.filter((d) => d._tag === "Commit").map((d) => d.proposal)
    expect(commits).not.toEqual([...commits].sort((a, b) => a - b))
    const schedule = (seed: number) => {
      const s = new WindowSchedule({ windowMs: 1, rejectRate: 0.2, reorderRate: 0.3, seed })
      return Array.from({ length: 20 }, () => s.next())
    }
    expect(schedule(42)).toEqual(schedule(42))
  })
})

describe("a scripted window", () => {
  it("gives the first proposals the fates it is told, then follows its rates", async () => {
    const source = new WindowConsensus({
      windowMs: 5,
      rejectRate: 0,
      reorderRate: 0,
      seed: 1,
      script: ["reorder", "commit", "reject"]
    })
    const decisions = collect(source)
    // Proposed in one turn: the reordered first one commits right after the second.
    for (let p = 1; p <= 4; p++) source.propose({ proposal: p, digest: "d", txs: 1 })
    await waitFor(() => decisions.length === 4)
    source.close()
    expect(decisions.map((d) => `${d._tag} ${d.proposal}`)).toEqual(["Commit 2", "Commit 1", "Reject 3", "Commit 4"])
  })
})

describe("the POPUC chain's slot sequencer", () => {
  it("releases decisions in slot order whatever order the group's replies come in", () => {
    const s = new SlotSequencer()
    const [a, b, c] = [s.claim(), s.claim(), s.claim()]
    expect(s.settle(c, { _tag: "Commit", proposal: 3 })).toEqual([])
    expect(s.settle(b, { _tag: "Commit", proposal: 2 })).toEqual([])
    expect(s.settle(a, { _tag: "Commit", proposal: 1 }).map((d) => d.proposal)).toEqual([1, 2, 3])
    // A repeated reply (a retried compare-and-set) changes nothing.
    expect(s.settle(b, { _tag: "Commit", proposal: 2 })).toEqual([])
  })
})
