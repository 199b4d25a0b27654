import { describe, expect, it } from "vitest"
import { tx } from "../test/core-fixtures.js"
import { createAutoscaler, observe } from "./autoscaler.js"
import {
  type CoordinatorInput,
  type CoordinatorOutput,
  createCoordinator,
  defaultCoordinatorParams,
  poolLoads,
  stepCoordinator
} from "./coordinator.js"
import { COORDINATOR_OWNER, ownerOf, versionOf } from "./object-table.js"
import { COORDINATOR_SOURCE, type TxMeta } from "./types.js"

type Out = ReadonlyArray<CoordinatorOutput<string>>
const refs = (ids: ReadonlyArray<string>) => ids.map((id) => ({ id, incarnation: "1" }))

/** A coordinator driven like its shell: every worker completes what it is sent; epochs persist when asked. */
const harness = (workers: ReadonlyArray<string>) => {
  const s = createCoordinator<string>({ ...defaultCoordinatorParams, schedulingTiming: "post-consensus" })
  const log: Array<CoordinatorOutput<string>> = []
  /** Seqs sent and not reported yet, by worker. */
  const running = new Map<string, Array<number>>()
  let proposal = 0
  const step = (input: CoordinatorInput<string>): Out => {
    const out = stepCoordinator(s, input)
    log.push(...out)
    for (const o of out) {
      if (o._tag === "SendStateful")
        running.set(o.worker, [...(running.get(o.worker) ?? []), ...o.tasks.map((t) => t.seq)])
      if (o._tag === "Persist") step({ _tag: "Persisted", epoch: o.epoch })
      if (o._tag === "RequestEpochReports") {
        // One report holding every version the epoch's end expects (the core keeps exactly those).
        const c = s.closed[0]!
        const objects = [...c.expected].map(([key, version]) => ({ key, version, value: new Uint8Array([version]) }))
        step({ _tag: "EpochReport", worker: o.workers[0]!, generation: s.generation, epoch: o.epoch, objects })
      }
    }
    return out
  }
  /** Reports the worker's running tasks (or only `only` of them) as completed. */
  const finish = (worker: string, only?: ReadonlyArray<number>): Out => {
    const all = running.get(worker) ?? []
    const seqs = only ?? all
    running.set(
      worker,
      all.filter((q) => !seqs.includes(q))
    )
    return step({
      _tag: "Report",
      worker,
      incarnation: "1",
      completions: seqs.map((seq) => ({ seq, status: "executed" as const, leaseTransfers: 0, detail: "" })),
      statelessDoneUs: 0,
      generation: s.generation
    })
  }
  const block = (txs: ReadonlyArray<TxMeta<string>>): Out => {
    proposal++
    return [
      ...step({ _tag: "Propose", block: { proposal, digest: `d${proposal}`, txs } }),
      ...step({ _tag: "Commit", proposal })
    ]
  }
  step({ _tag: "Workers", workers: refs(workers) })
  return { s, log, step, finish, block, running }
}

const tasksOf = (out: Out, worker: string) =>
  out.flatMap((o) => (o._tag === "SendStateful" && o.worker === worker ? o.tasks : []))
const statelessTo = (out: Out) => out.flatMap((o) => (o._tag === "SendStateless" ? [o.worker] : []))
const tagged = <T extends CoordinatorOutput<string>["_tag"]>(out: Out, tag: T) =>
  out.filter((o): o is Extract<CoordinatorOutput<string>, { _tag: T }> => o._tag === tag)

describe("graceful scale-in (§4.7, Alg. 5)", () => {
  it("drains, ends an epoch, reclaims at the persisted versions, retires, and its departure is no failure", () => {
    const h = harness(["w1", "w2"])
    h.block([tx("a", ["x"]), tx("b", ["y"]), tx("c", ["z"])])
    const w2keys = tasksOf(h.log, "w2").flatMap((t) => t.tx.keys)
    expect(w2keys.length).toBeGreaterThan(0)
    expect(tagged(h.step({ _tag: "Retire", worker: "w2", reason: "load-low" }), "Retiring")).toHaveLength(1)
    // StopPlacingStateful: new work goes to w1 only, stateless parts too.
    const after = h.block([tx("d", ["p"]), tx("e", ["q"])])
    expect(tasksOf(after, "w2")).toHaveLength(0)
    expect(statelessTo(after).every((w) => w === "w1")).toBe(true)
    // Still in flight at w2: nothing is reclaimed yet.
    h.finish("w1")
    expect(tagged(h.log, "Reclaimed")).toHaveLength(0)
    h.finish("w2")
    const [reclaimed] = tagged(h.log, "Reclaimed")
    expect(reclaimed).toMatchObject({ worker: "w2", objects: new Set(w2keys).size })
    expect(tagged(h.log, "Retired")).toMatchObject([{ worker: "w2", left: false, reclaimed: reclaimed!.objects }])
    for (const key of w2keys) {
      const packed = h.s.router.get(h.s.keys.find(key))
      expect(ownerOf(packed)).toBe(COORDINATOR_OWNER)
      expect(h.s.snapshot.get(key)?.version).toBe(versionOf(packed))
    }
    // Its objects are fetched from the coordinator at their persisted versions.
    const next = h.block([tx("f", [w2keys[0]!])])
    expect(tasksOf(next, "w1")[0]!.sources).toEqual([COORDINATOR_SOURCE])
    const fetched = h.step({ _tag: "ObjectRequest", key: w2keys[0]!, version: 1, requester: "w1" })
    expect(fetched).toMatchObject([{ _tag: "SendObject", value: new Uint8Array([1]) }])
    // Its process stops and leaves presence: expected, no fence, no rollback.
    const gone = h.step({ _tag: "Workers", workers: refs(["w1"]) })
    expect(gone.filter((o) => o._tag === "Fence" || o._tag === "Recovered")).toEqual([])
    expect(h.s.stats.recoveries).toBe(0)
    expect(h.s.stats.workerLosses).toBe(0)
  })

  it("waits for tasks told to fetch from the retiring worker before it retires", () => {
    const h = harness(["w1", "w2"])
    h.block([tx("a", ["x"]), tx("b", ["y"])])
    const [xOwner] = tasksOf(h.log, "w2").flatMap((t) => t.tx.keys)
    h.step({ _tag: "Retire", worker: "w2", reason: "test" })
    const [first] = h.running.get("w1")!
    // w2 drained; its epoch ends and waits for w1's task.
    h.finish("w2")
    // Dispatched after the epoch ended, before the reclaim: w1 is told to fetch w2's key from w2.
    const reading = tasksOf(h.block([tx("c", [xOwner!])]), "w1")
    expect(reading[0]!.sources).toEqual(["w2"])
    h.finish("w1", [first!])
    expect(tagged(h.log, "Reclaimed")).toHaveLength(1)
    expect(tagged(h.log, "Retired")).toHaveLength(0)
    h.finish("w1")
    expect(tagged(h.log, "Retired")).toMatchObject([{ worker: "w2" }])
  })

  it("retires an idle worker at once", () => {
    const h = harness(["w1", "w2"])
    const out = h.step({ _tag: "Retire", worker: "w2", reason: "" })
    expect(out.map((o) => o._tag)).toEqual(["Retiring", "Reclaimed", "Retired"])
  })

  it("refuses to retire the last worker that takes work, or an unknown one", () => {
    const h = harness(["w1", "w2"])
    expect(h.step({ _tag: "Retire", worker: "w9", reason: "" })).toMatchObject([{ _tag: "RetireRefused" }])
    h.step({ _tag: "Retire", worker: "w1", reason: "" })
    expect(h.step({ _tag: "Retire", worker: "w2", reason: "" })).toMatchObject([
      { _tag: "RetireRefused", reason: "the last worker that takes work" }
    ])
  })

  it("a retiring worker that crashes is recovered like any other, and counts as retired", () => {
    const h = harness(["w1", "w2", "w3"])
    h.block([tx("a", ["x"]), tx("b", ["y"]), tx("c", ["z"])])
    h.step({ _tag: "Retire", worker: "w3", reason: "" })
    const out = h.step({ _tag: "Workers", workers: refs(["w1", "w2"]) })
    expect(tagged(out, "Recovered")).toHaveLength(1)
    expect(tagged(out, "Retired")).toMatchObject([{ worker: "w3", left: true }])
  })

  it("cancels the retirement when every other worker leaves", () => {
    const h = harness(["w1", "w2"])
    h.block([tx("a", ["x"]), tx("b", ["y"])])
    expect(h.running.get("w2")).toHaveLength(1)
    h.step({ _tag: "Retire", worker: "w2", reason: "" })
    expect(h.step({ _tag: "Workers", workers: refs(["w2"]) })).toContainEqual(
      expect.objectContaining({ _tag: "RetireCancelled", worker: "w2" })
    )
    expect(tasksOf(h.block([tx("a", ["x"])]), "w2")).toHaveLength(1)
  })
})

describe("scale-out (§4.7)", () => {
  it("a new worker gets stateless work at once and no recovery runs", () => {
    const h = harness(["w1"])
    h.block([tx("a", ["x"], ["x"], { statelessCostUs: 100, statefulCostUs: 100 })])
    const joined = h.step({ _tag: "Workers", workers: refs(["w1", "w2"]) })
    expect(joined.filter((o) => o._tag === "Fence" || o._tag === "Recovered")).toEqual([])
    const out = h.block([tx("b", ["p"], ["p"], { statelessCostUs: 100 })])
    expect(statelessTo(out)).toEqual(["w2"])
  })
})

describe("the autoscaler on the coordinator's loads", () => {
  it("grows the pool under a sustained load and retires a worker when it drops, ending with no recovery", () => {
    const h = harness(["w1"])
    const policy = createAutoscaler({
      min: 1,
      max: 3,
      highLoad: 1_000,
      lowLoad: 100,
      sustain: 2,
      coolDownMs: 10,
      spawnTimeoutMs: 1_000
    })
    const spares = ["w2", "w3"]
    const decisions: Array<string> = []
    let now = 0
    const tick = (busy: boolean) => {
      now += 10
      if (busy) h.block([tx(`t${now}`, [`k${now % 7}`], [`k${now % 7}`], { statefulCostUs: 2_000 })])
      else for (const w of h.running.keys()) h.finish(w)
      const d = observe(policy, now, poolLoads(h.s))
      if (d?._tag === "Spawn") {
        decisions.push(`spawn:${d.reason}`)
        const ids = [...poolLoads(h.s).map((w) => w.id), spares.shift()!]
        h.step({ _tag: "Workers", workers: refs(ids) })
      } else if (d?._tag === "Retire") {
        decisions.push(`retire:${d.worker}`)
        h.step({ _tag: "Retire", worker: d.worker, reason: d.reason })
      }
    }
    for (let i = 0; i < 12; i++) tick(true)
    for (let i = 0; i < 12; i++) tick(false)
    expect(decisions.filter((d) => d.startsWith("spawn"))).toEqual(["spawn:load-high", "spawn:load-high"])
    expect(decisions.some((d) => d.startsWith("retire"))).toBe(true)
    const retired = tagged(h.log, "Retired").map((r) => r.worker)
    expect(retired.length).toBeGreaterThan(0)
    // Stopped processes leave presence: no recovery.
    h.step({ _tag: "Workers", workers: refs(poolLoads(h.s).map((w) => w.id)) })
    expect(h.s.stats.recoveries).toBe(0)
    expect(h.s.active.length).toBe(3 - retired.length)
  })
})
