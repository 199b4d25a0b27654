import { describe, expect, it } from "vitest"
import { tx } from "../test/core-fixtures.js"
import {
  type CoordinatorOutput,
  type CoordinatorParams,
  createCoordinator,
  defaultCoordinatorParams,
  type StatefulTaskData,
  stepCoordinator
} from "./coordinator.js"
import { versionOf } from "./object-table.js"
import { COORDINATOR_SOURCE, GENESIS_SOURCE, type TxMeta } from "./types.js"

/** Workers in their first incarnation ("<id>@1"). */
const refs = (ids: ReadonlyArray<string>, incarnation = "1") => ids.map((id) => ({ id, incarnation }))

const coordinator = (params: Partial<CoordinatorParams> = {}, workers = ["w1", "w2"]) => {
  const s = createCoordinator<string>({ ...defaultCoordinatorParams, ...params })
  stepCoordinator(s, { _tag: "Workers", workers: refs(workers) })
  return s
}

const report = (worker: string, incarnation: string, seqs: ReadonlyArray<number>) => ({
  _tag: "Report" as const,
  worker,
  incarnation,
  completions: seqs.map((seq) => ({ seq, status: "executed" as const, leaseTransfers: 0, detail: "" })),
  statelessDoneUs: 0,
  generation: 0
})

const propose = (s: ReturnType<typeof coordinator>, proposal: number, txs: ReadonlyArray<TxMeta<string>>) => [
  ...stepCoordinator(s, { _tag: "Propose", block: { proposal, digest: `d${proposal}`, txs } }),
  ...stepCoordinator(s, { _tag: "Plan", proposal })
]

const stateful = (
  out: ReadonlyArray<CoordinatorOutput<string>>
): Array<StatefulTaskData<string> & { worker: string }> =>
  out
    .flatMap((o) => (o._tag === "SendStateful" ? o.tasks.map((t) => ({ ...t, worker: o.worker })) : []))
    .sort((a, b) => a.seq - b.seq)

const committed = (out: ReadonlyArray<CoordinatorOutput<string>>) => out.find((o) => o._tag === "Committed")

describe("version assignment (App. A.6)", () => {
  it('"for each key k ∈ R(Ti) ∪ W(Ti), the Coordinator increments the version counter": reads get versions too', () => {
    const s = coordinator({ schedulingTiming: "post-consensus" })
    propose(s, 1, [tx("a", ["x", "y"], ["y"]), tx("b", ["x"], []), tx("c", ["x", "y"])])
    const tasks = stateful(stepCoordinator(s, { _tag: "Commit", proposal: 1 }))
    expect(tasks.map((t) => t.versions)).toEqual([[0, 0], [1], [2, 1]])
    expect(versionOf(s.router.get(s.keys.find("x")))).toBe(3)
    expect(versionOf(s.router.get(s.keys.find("y")))).toBe(2)
  })

  it('"walking through the order exactly once": versions follow the committed order across blocks', () => {
    const s = coordinator({ schedulingTiming: "post-consensus" })
    propose(s, 1, [tx("a", ["k"])])
    propose(s, 2, [tx("b", ["k"])])
    // Consensus orders proposal 2 first.
    const first = stateful(stepCoordinator(s, { _tag: "Commit", proposal: 2 }))
    const second = stateful(stepCoordinator(s, { _tag: "Commit", proposal: 1 }))
    expect(first.map((t) => [t.tx.id, t.seq, t.versions[0]])).toEqual([["b", 1, 0]])
    expect(second.map((t) => [t.tx.id, t.seq, t.versions[0]])).toEqual([["a", 2, 1]])
  })
})

describe("speculative planning during the consensus window (§4.4, App. A.6)", () => {
  it('"If the committed order matches the proposal, the speculative assignment is adopted"', () => {
    const s = coordinator()
    const planned = propose(s, 1, [tx("a", ["k"]), tx("b", ["k"])])
    expect(planned.some((o) => o._tag === "Planned" && o.at === "proposal")).toBe(true)
    propose(s, 2, [tx("c", ["k"])])
    const c1 = stepCoordinator(s, { _tag: "Commit", proposal: 1 })
    const c2 = stepCoordinator(s, { _tag: "Commit", proposal: 2 })
    expect(committed(c1)).toMatchObject({ adopted: true })
    expect(committed(c2)).toMatchObject({ adopted: true })
    expect(c1.some((o) => o._tag === "Planned")).toBe(false)
    expect(stateful(c2)[0]!.versions).toEqual([2])
    expect(s.stats.plansAdopted).toBe(2)
  })

  it('"Otherwise, the speculative assignment is discarded and the Coordinator recomputes versions"', () => {
    const s = coordinator()
    propose(s, 1, [tx("a", ["k"])])
    propose(s, 2, [tx("b", ["k"])])
    // Proposal 2 commits first: its window plan assumed proposal 1 before it (input version 1).
    const out = stepCoordinator(s, { _tag: "Commit", proposal: 2 })
    expect(committed(out)).toMatchObject({ adopted: false })
    expect(stateful(out)[0]!.versions).toEqual([0])
    // Proposal 1's plan was redone on the new metadata: it now comes second.
    const later = stepCoordinator(s, { _tag: "Commit", proposal: 1 })
    expect(committed(later)).toMatchObject({ adopted: true })
    expect(stateful(later)[0]!.versions).toEqual([1])
  })

  it('"If a block is dropped, the scheduler pauses, synchronizes the two metadata versions, discards intermediate schedules"', () => {
    const s = coordinator()
    propose(s, 1, [tx("a", ["k"])])
    propose(s, 2, [tx("b", ["k"])])
    const rejected = stepCoordinator(s, { _tag: "Reject", proposal: 1 })
    expect(rejected.find((o) => o._tag === "Rejected")).toMatchObject({ proposal: 1 })
    expect(rejected.some((o) => o._tag === "Planned" && o.proposal === 2)).toBe(true)
    const out = stepCoordinator(s, { _tag: "Commit", proposal: 2 })
    expect(committed(out)).toMatchObject({ adopted: true })
    expect(stateful(out)[0]!.versions).toEqual([0])
  })
})

describe("ownership and dispatch annotations (§4.2, App. A.7)", () => {
  it('"The Coordinator acts as the global owner of all objects": untouched versions come from the initial state', () => {
    const derived = coordinator({ schedulingTiming: "post-consensus" })
    propose(derived, 1, [tx("a", ["k"])])
    expect(stateful(stepCoordinator(derived, { _tag: "Commit", proposal: 1 }))[0]!.sources).toEqual([GENESIS_SOURCE])
    const fetched = coordinator({ schedulingTiming: "post-consensus", genesisAtWorkers: false })
    propose(fetched, 1, [tx("a", ["k"])])
    expect(stateful(stepCoordinator(fetched, { _tag: "Commit", proposal: 1 }))[0]!.sources).toEqual([
      COORDINATOR_SOURCE
    ])
  })

  it('"including a source hint B in the dispatch message to A and atomically updating the ownership metadata owner[k] ← A"', () => {
    const s = coordinator({ policy: "round-robin", schedulingTiming: "post-consensus" })
    propose(s, 1, [tx("a", ["k"]), tx("b", ["k"]), tx("c", ["k"])])
    const tasks = stateful(stepCoordinator(s, { _tag: "Commit", proposal: 1 }))
    expect(tasks.map((t) => [t.worker, t.sources[0]])).toEqual([
      ["w1", GENESIS_SOURCE],
      ["w2", "w1"],
      ["w1", "w2"]
    ])
  })

  it("dispatches one batch per worker, in consensus order within it", () => {
    const s = coordinator({ policy: "round-robin", schedulingTiming: "post-consensus" })
    propose(s, 1, [tx("a", ["p"]), tx("b", ["q"]), tx("c", ["r"]), tx("d", ["s"])])
    const batches = stepCoordinator(s, { _tag: "Commit", proposal: 1 }).filter((o) => o._tag === "SendStateful")
    expect(batches.map((b) => (b._tag === "SendStateful" ? [b.worker, b.tasks.map((t) => t.seq)] : []))).toEqual([
      ["w1", [1, 3]],
      ["w2", [2, 4]]
    ])
  })
})

describe("stateless-stateful separation (§4.3)", () => {
  it("sends stateless parts at proposal, and the stateful task names the worker holding the token", () => {
    const s = coordinator({ policy: "round-robin" })
    const out = propose(s, 1, [
      tx("a", ["p"], ["p"], { statelessCostUs: 100 }),
      tx("b", ["q"], ["q"], { statelessCostUs: 100 })
    ])
    const stateless = out.filter((o) => o._tag === "SendStateless")
    expect(stateless.map((o) => (o._tag === "SendStateless" ? o.tasks.length : 0))).toEqual([1, 1])
    const tasks = stateful(stepCoordinator(s, { _tag: "Commit", proposal: 1 }))
    const where = new Map(
      stateless.flatMap((o) => (o._tag === "SendStateless" ? o.tasks.map((t) => [t.tx.id, o.worker]) : []))
    )
    for (const t of tasks) expect(t.tokenSource).toBe(where.get(t.tx.id))
  })

  it("post-consensus stateless work is sent at commit; worker-based and no separation leave it to the stateful worker", () => {
    const post = coordinator({ statelessTiming: "post-consensus" })
    expect(propose(post, 1, [tx("a", ["p"])]).some((o) => o._tag === "SendStateless")).toBe(false)
    expect(stepCoordinator(post, { _tag: "Commit", proposal: 1 }).some((o) => o._tag === "SendStateless")).toBe(true)
    for (const separation of ["worker", "none"] as const) {
      const s = coordinator({ separation })
      expect(propose(s, 1, [tx("a", ["p"])]).some((o) => o._tag === "SendStateless")).toBe(false)
      const [task] = stateful(stepCoordinator(s, { _tag: "Commit", proposal: 1 }))
      expect(task).toMatchObject({ tokenSource: "", combined: separation === "none" })
    }
  })
})

describe("validation tokens pushed to the planned worker", () => {
  it("stateless parts go out with the window's plan: each token is pushed where the plan runs its stateful part", () => {
    // One subgraph (every transaction touches p): one worker runs them all, the stateless parts spread by load.
    const s = coordinator({ policy: "sfs" }, ["w1", "w2", "w3"])
    const txs = [tx("a", ["p"]), tx("b", ["p", "q"]), tx("c", ["p", "r"]), tx("d", ["p", "s"])]
    const window = propose(s, 1, txs)
    const stateless = window.flatMap((o) =>
      o._tag === "SendStateless" ? o.tasks.map((t) => ({ ...t, at: o.worker })) : []
    )
    expect(stateless).toHaveLength(4)
    const tasks = stateful(stepCoordinator(s, { _tag: "Commit", proposal: 1 }))
    for (const task of tasks) {
      const check = stateless.find((t) => t.tx.id === task.tx.id)!
      if (check.at === task.worker) {
        expect([check.pushTo, task.tokenSource, task.tokenPushed]).toEqual(["", task.worker, false])
      } else {
        expect([check.pushTo, task.tokenSource, task.tokenPushed]).toEqual([task.worker, check.at, true])
      }
    }
    expect(tasks.some((t) => t.tokenPushed)).toBe(true)
  })

  it("when the plan is recomputed the token is fetched from where it was pushed", () => {
    const s = coordinator({ policy: "sfs" }, ["w1", "w2", "w3"])
    const first = propose(s, 1, [tx("a", ["p"]), tx("a2", ["p"]), tx("a3", ["p"])])
    const second = propose(s, 2, [tx("b", ["p"]), tx("c", ["p"]), tx("e", ["p"])])
    const pushes = [...first, ...second].flatMap((o) => (o._tag === "SendStateless" ? o.tasks : []))
    // Proposal 2 commits first: its plan (made after proposal 1's) is dropped and placed again.
    const tasks = stateful(stepCoordinator(s, { _tag: "Commit", proposal: 2 }))
    let moved = 0
    for (const task of tasks) {
      const push = pushes.find((t) => t.tx.id === task.tx.id)!.pushTo
      if (push !== "" && push !== task.worker) {
        moved++
        expect([task.tokenSource, task.tokenPushed]).toEqual([push, false])
      }
    }
    expect(moved).toBeGreaterThan(0)
  })
})

describe("completions", () => {
  it("each committed transaction gets one receipt; the watermark is the lowest seq not completed", () => {
    const s = coordinator({ policy: "round-robin" })
    propose(s, 1, [tx("a", ["p"]), tx("b", ["q"]), tx("c", ["r"])])
    stepCoordinator(s, { _tag: "Commit", proposal: 1 })
    const done = (worker: string, seq: number) => stepCoordinator(s, report(worker, "1", [seq]))
    expect(done("w2", 2).map((o) => o._tag)).toEqual(["Completed"])
    expect(s.inflight.watermark).toBe(1)
    done("w1", 1)
    expect(s.inflight.watermark).toBe(3)
    expect(done("w1", 1)).toEqual([])
    expect(s.stats.duplicateCompletions).toBe(1)
    done("w1", 3)
    expect(s.inflight.watermark).toBe(4)
    expect(s.inflight.size).toBe(0)
  })

  it("a block committed while no worker exists waits for one", () => {
    const s = coordinator({}, [])
    propose(s, 1, [tx("a", ["p"])])
    expect(stepCoordinator(s, { _tag: "Commit", proposal: 1 }).some((o) => o._tag === "SendStateful")).toBe(false)
    const out = stepCoordinator(s, { _tag: "Workers", workers: refs(["w9"]) })
    // Its stateless part was never sent (no worker at proposal): it goes at commit, with the stateful part.
    expect(out.some((o) => o._tag === "SendStateless" && o.worker === "w9")).toBe(true)
    expect(stateful(out).map((t) => [t.worker, t.seq, t.tokenSource])).toEqual([["w9", 1, "w9"]])
  })
})

describe("worker incarnations (a restarted process is a new worker)", () => {
  const restarted = () => {
    const s = coordinator({ policy: "round-robin", schedulingTiming: "post-consensus" })
    propose(s, 1, [tx("a", ["p"]), tx("b", ["q"])])
    const first = stateful(stepCoordinator(s, { _tag: "Commit", proposal: 1 }))
    const restart = stepCoordinator(s, { _tag: "Workers", workers: [...refs(["w1"], "2"), ...refs(["w2"])] })
    return { s, first, restart }
  }

  it("reports what the old incarnation had in flight and owned, and keeps it as recovery's input", () => {
    const { s, first, restart } = restarted()
    const lostSeqs = first.filter((t) => t.worker === "w1").map((t) => t.seq)
    expect(lostSeqs).toHaveLength(1)
    expect(restart.filter((o) => o._tag === "WorkerRestarted")).toEqual([
      { _tag: "WorkerRestarted", worker: "w1", previous: "1", incarnation: "2", lostSeqs, leases: 1 }
    ])
    expect(s.lost.map((l) => [l.worker, l.seqs])).toEqual([[{ id: "w1", incarnation: "1" }, lostSeqs]])
    expect(s.stats.workerRestarts).toBe(1)
  })

  it("fences the old incarnation off: its completions (an older generation) no longer count", () => {
    const { s, first, restart } = restarted()
    const seq = first.find((t) => t.worker === "w1")!.seq
    expect(restart.some((o) => o._tag === "Fence" && o.generation === 1)).toBe(true)
    expect(stepCoordinator(s, report("w1", "1", [seq]))).toEqual([])
    expect(s.stats.staleCompletions).toBe(1)
    expect(s.inflight.size).toBe(2)
  })

  it("recovers by replaying every seq after the snapshot, under the new generation (§4.6)", () => {
    const { s, restart } = restarted()
    const recovered = restart.find((o) => o._tag === "Recovered")
    expect(recovered).toMatchObject({ fromSeq: 1, toSeq: 2, blocks: 1, generation: 1, reason: "w1 restarted" })
    const replayed = stateful(restart)
    expect(replayed.map((t) => t.seq).sort()).toEqual([1, 2])
    // Nothing was persisted: every input is the initial value again, and the new incarnation gets its tasks.
    for (const t of replayed) expect(t.sources).toEqual([GENESIS_SOURCE])
    expect(restart.every((o) => o._tag !== "SendStateful" || o.worker !== "w1" || o.incarnation === "2")).toBe(true)
    const done = stepCoordinator(s, {
      ...report(
        "w1",
        "2",
        replayed.filter((t) => t.worker === "w1").map((t) => t.seq)
      ),
      generation: 1
    })
    expect(done.map((o) => o._tag)).toEqual(["Completed"])
  })

  it("a stale view naming the old incarnation does not bring it back", () => {
    const { s } = restarted()
    const out = stepCoordinator(s, { _tag: "Workers", workers: refs(["w1", "w2"]) })
    expect(out.some((o) => o._tag === "WorkerRestarted")).toBe(false)
    expect(s.active.map((c) => [s.registry.idOf(c), s.registry.incarnationOf(c)])).toEqual([["w2", "1"]])
  })

  it("a token held by the old incarnation is not fetched from the new one", () => {
    const s = coordinator({ policy: "round-robin" })
    const proposed = propose(s, 1, [tx("a", ["p"]), tx("b", ["q"])])
    const atW1 = proposed.flatMap((o) => (o._tag === "SendStateless" && o.worker === "w1" ? o.tasks : []))
    expect(atW1).toHaveLength(1)
    stepCoordinator(s, { _tag: "Workers", workers: [...refs(["w1"], "2"), ...refs(["w2"])] })
    const tasks = stateful(stepCoordinator(s, { _tag: "Commit", proposal: 1 }))
    const task = tasks.find((t) => t.tx.id === atW1[0]!.tx.id)!
    // The old incarnation's token is gone with it (a fence): the check runs again, never fetched from w1's old life.
    expect(s.registry.isRetired(s.registry.find("w1", "1")!)).toBe(true)
    expect(task.tokenSource === "" || s.active.some((c) => s.registry.idOf(c) === task.tokenSource)).toBe(true)
  })
})
