import { describe, expect, it } from "vitest"
import { tx } from "../test/core-fixtures.js"
import { COORDINATOR_SOURCE, GENESIS_SOURCE, type TxMeta } from "./types.js"
import { createWorker, type StatefulIn, stepWorker, type WorkerOutput } from "./worker.js"

/** A contract that appends the transaction id to every key it writes (order-sensitive, easy to read). */
const appendId = (payload: string, read: (key: string) => Uint8Array) => ({
  status: "executed" as const,
  writes: new Map(
    ["k", "x", "y"].flatMap((k) => {
      try {
        return [[k, new TextEncoder().encode(`${new TextDecoder().decode(read(k))}${payload};`)] as const]
      } catch {
        return []
      }
    })
  ),
  detail: ""
})

const worker = (self = "w1", cores = 2) =>
  createWorker<string>({
    self,
    incarnation: "i1",
    cores,
    retryAfterMs: 100,
    tokenTtlMs: 1000,
    genesis: () => new Uint8Array(),
    execute: appendId,
    symmetricPolicy: "round-robin",
    observe: false
  })

const task = (
  seq: number,
  t: TxMeta<string>,
  versions: ReadonlyArray<number>,
  sources: ReadonlyArray<string>,
  extra: Partial<StatefulIn<string>> = {}
): StatefulIn<string> => ({
  seq,
  tx: t,
  versions,
  sources,
  tokenSource: "",
  tokenPushed: false,
  combined: true,
  watermark: 1,
  height: 1,
  epoch: 1,
  generation: 0,
  trace: "",
  incarnation: "i1",
  ...extra
})

const tags = (out: ReadonlyArray<WorkerOutput<string>>) => out.map((o) => o._tag)
const started = (out: ReadonlyArray<WorkerOutput<string>>) =>
  out.flatMap((o) => (o._tag === "StartUnit" ? [o.unit] : []))
const text = (v: Uint8Array | undefined) => (v === undefined ? undefined : new TextDecoder().decode(v))

describe("the execution rule (App. A.9)", () => {
  it('runs T "only when all Coordinator-assigned input versions (k, i) ... are available locally"', () => {
    const w = worker()
    const out = stepWorker(w, { _tag: "Stateful", tasks: [task(1, tx("a", ["k"]), [3], ["w2"])] })
    expect(out).toEqual([{ _tag: "RequestObject", to: "w2", key: "k", version: 3, trace: "" }])
    const arrived = stepWorker(w, {
      _tag: "ObjectArrived",
      key: "k",
      version: 3,
      value: new TextEncoder().encode("v3;"),
      from: "w2"
    })
    const [unit] = started(arrived)
    expect(unit).toBeDefined()
    const done = stepWorker(w, { _tag: "UnitDone", unit: unit!, valid: true })
    expect(done).toContainEqual({ _tag: "Completed", seq: 1, status: "executed", leaseTransfers: 1, detail: "" })
    // "Executing T consumes all assigned input versions (k, i) and produces new versions (k, i+1)".
    expect(w.objects.get("k")?.version).toBe(4)
    expect(text(w.objects.get("k")?.value)).toBe("v3;a;")
  })

  it('"the runtime garbage-collects ... the object version immediately after it has been consumed"', () => {
    const w = worker()
    stepWorker(w, {
      _tag: "Stateful",
      tasks: [task(1, tx("a", ["k"]), [0], [GENESIS_SOURCE]), task(2, tx("b", ["k"]), [1], ["w1"])]
    })
    const first = started(stepWorker(w, { _tag: "Tick", nowMs: 0 }))
    expect(w.objects.size).toBe(1)
    for (const u of [...w.running.keys()]) stepWorker(w, { _tag: "UnitDone", unit: u, valid: true })
    expect(first).toEqual([])
    for (const u of [...w.running.keys()]) stepWorker(w, { _tag: "UnitDone", unit: u, valid: true })
    expect([...w.objects].map(([k, o]) => [k, o.version, text(o.value)])).toEqual([["k", 2, "a;b;"]])
  })

  it('"When Validate(T) returns invalid ... performs a no-op" that still consumes and produces the versions', () => {
    const w = worker()
    const out = stepWorker(w, { _tag: "Stateful", tasks: [task(1, tx("bad", ["k"]), [0], [GENESIS_SOURCE])] })
    const done = stepWorker(w, { _tag: "UnitDone", unit: started(out)[0]!, valid: false })
    expect(done).toContainEqual({
      _tag: "Completed",
      seq: 1,
      status: "invalid-signature",
      leaseTransfers: 0,
      detail: "signature does not verify"
    })
    expect(w.objects.get("k")?.version).toBe(1)
    expect(text(w.objects.get("k")?.value)).toBe("")
  })

  it("ignores a duplicated dispatch and a stale duplicate transfer", () => {
    const w = worker()
    const t = task(1, tx("a", ["k"]), [0], [COORDINATOR_SOURCE])
    stepWorker(w, { _tag: "Stateful", tasks: [t] })
    expect(stepWorker(w, { _tag: "Stateful", tasks: [t] })).toEqual([])
    const value = new TextEncoder().encode("")
    const run = started(stepWorker(w, { _tag: "ObjectArrived", key: "k", version: 0, value, from: COORDINATOR_SOURCE }))
    stepWorker(w, { _tag: "UnitDone", unit: run[0]!, valid: true })
    expect(stepWorker(w, { _tag: "ObjectArrived", key: "k", version: 0, value, from: COORDINATOR_SOURCE })).toEqual([])
    expect(w.objects.get("k")?.version).toBe(1)
    expect(w.stats.duplicates).toBe(2)
  })
})

describe("incarnations", () => {
  it("drops a stateful task sent to another incarnation of this worker (its inputs were that process's)", () => {
    const w = worker()
    const out = stepWorker(w, {
      _tag: "Stateful",
      tasks: [task(1, tx("a", ["k"]), [3], ["w1"], { incarnation: "i0" })]
    })
    expect(out).toEqual([])
    expect(w.tasks.size).toBe(0)
    expect(w.stats.foreign).toBe(1)
    // The same seq sent to this incarnation runs.
    const own = stepWorker(w, { _tag: "Stateful", tasks: [task(1, tx("a", ["k"]), [0], ["#genesis"])] })
    expect(started(own)).toHaveLength(1)
  })
})

describe("lease transfers (§4.2, Alg. 3 EnsureOwnership)", () => {
  it("serves a peer's request once the version is produced, and forgets the object", () => {
    const w = worker("w1")
    stepWorker(w, { _tag: "Stateful", tasks: [task(1, tx("a", ["k"]), [0], [GENESIS_SOURCE])] })
    // w2 runs the next transaction on k and asks for (k, 1) before it exists.
    expect(stepWorker(w, { _tag: "ObjectRequest", key: "k", version: 1, requester: "w2", trace: "" })).toEqual([])
    const done = stepWorker(w, { _tag: "UnitDone", unit: [...w.running.keys()][0]!, valid: true })
    const sent = done.find((o) => o._tag === "SendObject")
    expect(sent).toMatchObject({ to: "w2", key: "k", version: 1 })
    expect(w.objects.has("k")).toBe(false)
    // A repeated request is answered "missing": w1 no longer has (k, 1) and never will.
    expect(stepWorker(w, { _tag: "ObjectRequest", key: "k", version: 1, requester: "w2", trace: "" })).toEqual([
      { _tag: "SendObject", to: "w2", key: "k", version: 1, value: undefined, trace: "", generation: 0 }
    ])
  })

  it('"fetches the required version ... from Worker B ... If Worker B has already checkpointed its state or is unavailable, Worker A fetches the data from the Coordinator"', () => {
    const w = worker("w1")
    stepWorker(w, { _tag: "Stateful", tasks: [task(1, tx("a", ["k"]), [5], ["w2"])] })
    const fallback = stepWorker(w, { _tag: "ObjectArrived", key: "k", version: 5, value: undefined, from: "w2" })
    expect(fallback).toEqual([{ _tag: "RequestObject", to: COORDINATOR_SOURCE, key: "k", version: 5, trace: "" }])
    // The coordinator does not have it either: after the retry delay, the hinted owner is asked again.
    expect(
      stepWorker(w, { _tag: "ObjectArrived", key: "k", version: 5, value: undefined, from: COORDINATOR_SOURCE })
    ).toEqual([])
    expect(stepWorker(w, { _tag: "Tick", nowMs: 200 })).toMatchObject([{ _tag: "RequestObject", to: "w2" }])
    expect(stepWorker(w, { _tag: "Tick", nowMs: 200 })).toEqual([])
  })

  it("an owner that never answers (stopped without a recovery) is not waited on forever: retries alternate with the coordinator", () => {
    const w = worker("w1")
    stepWorker(w, { _tag: "Stateful", tasks: [task(1, tx("a", ["k"]), [5], ["w2"])] })
    const asked = (nowMs: number) =>
      stepWorker(w, { _tag: "Tick", nowMs }).flatMap((o) => (o._tag === "RequestObject" ? [o.to] : []))
    expect([asked(200), asked(400), asked(600), asked(800)]).toEqual([
      ["w2"],
      [COORDINATOR_SOURCE],
      ["w2"],
      [COORDINATOR_SOURCE]
    ])
    // The coordinator holds (k, 5) persisted: the task runs on it, and a late answer of w2 is a duplicate.
    stepWorker(w, { _tag: "ObjectArrived", key: "k", version: 5, value: new Uint8Array([7]), from: COORDINATOR_SOURCE })
    expect(w.fetching.size).toBe(0)
    stepWorker(w, { _tag: "ObjectArrived", key: "k", version: 5, value: new Uint8Array([7]), from: "w2" })
    expect(w.stats.duplicates).toBe(1)
  })
})

describe("stateless tasks and validation tokens (§4.3)", () => {
  it('"Stateless tasks are immediately runnable" on any worker; the token goes to the worker that asks for it', () => {
    const w = worker("w3")
    const started1 = stepWorker(w, {
      _tag: "Stateless",
      tasks: [{ tx: tx("a", ["k"], ["k"], { statelessCostUs: 50 }), proposal: 1, pushTo: "" }]
    })
    expect(started1).toMatchObject([{ _tag: "StartUnit", costUs: 50, verify: "a" }])
    expect(stepWorker(w, { _tag: "TokenRequest", txId: "a", requester: "w1" })).toEqual([])
    const done = stepWorker(w, { _tag: "UnitDone", unit: started(started1)[0]!, valid: true })
    expect(done).toEqual([
      { _tag: "StatelessDone", costUs: 50 },
      { _tag: "SendToken", to: "w1", txId: "a", valid: true }
    ])
  })

  it("a stateful task waits for its token from the worker that ran the stateless part", () => {
    const w = worker("w1")
    const out = stepWorker(w, {
      _tag: "Stateful",
      tasks: [task(1, tx("a", ["k"]), [0], [GENESIS_SOURCE], { combined: false, tokenSource: "w3" })]
    })
    expect(out).toEqual([{ _tag: "RequestToken", to: "w3", txId: "a" }])
    expect(started(stepWorker(w, { _tag: "TokenArrived", txId: "a", valid: true }))).toHaveLength(1)
  })

  it("pushes the token to the planned worker, which runs its task on arrival without asking", () => {
    const s3 = worker("w3")
    const check = stepWorker(s3, {
      _tag: "Stateless",
      tasks: [{ tx: tx("a", ["k"], ["k"], { statelessCostUs: 50 }), proposal: 1, pushTo: "w1" }]
    })
    const pushed = stepWorker(s3, { _tag: "UnitDone", unit: started(check)[0]!, valid: false })
    expect(pushed).toContainEqual({ _tag: "SendToken", to: "w1", txId: "a", valid: false })
    expect(s3.tokens.size).toBe(0)
    // The token reaches w1 before its task (the consensus window): kept, then used at once.
    const w = worker("w1")
    expect(stepWorker(w, { _tag: "TokenArrived", txId: "a", valid: false })).toEqual([])
    const pushedTask = task(1, tx("a", ["k"]), [0], [GENESIS_SOURCE], {
      combined: false,
      tokenSource: "w3",
      tokenPushed: true
    })
    const out = stepWorker(w, { _tag: "Stateful", tasks: [pushedTask] })
    expect(tags(out)).toEqual(["StartUnit"])
    const done = stepWorker(w, { _tag: "UnitDone", unit: started(out)[0]!, valid: true })
    expect(done).toContainEqual(expect.objectContaining({ _tag: "Completed", status: "invalid-signature" }))
  })

  it("a pushed token that does not come is computed locally after the retry delay, never asked for", () => {
    const w = worker("w1")
    const pushedTask = task(1, tx("a", ["k"]), [0], [GENESIS_SOURCE], {
      combined: false,
      tokenSource: "w3",
      tokenPushed: true
    })
    expect(stepWorker(w, { _tag: "Stateful", tasks: [pushedTask] })).toEqual([])
    expect(stepWorker(w, { _tag: "Tick", nowMs: 50 })).toEqual([])
    const retry = stepWorker(w, { _tag: "Tick", nowMs: 150 })
    expect(retry).toMatchObject([{ _tag: "StartUnit", verify: "a" }])
    const ran = stepWorker(w, { _tag: "UnitDone", unit: started(retry)[0]!, valid: true })
    expect(started(ran)).toHaveLength(1)
  })

  it("a token pushed to a worker the plan no longer uses is forwarded to the one that asks", () => {
    const w = worker("w1")
    expect(stepWorker(w, { _tag: "TokenRequest", txId: "a", requester: "w2" })).toEqual([])
    expect(stepWorker(w, { _tag: "TokenArrived", txId: "a", valid: true })).toEqual([
      { _tag: "SendToken", to: "w2", txId: "a", valid: true }
    ])
  })

  it("virtual cores: at most `cores` units at once, stateful work ahead of stateless checks", () => {
    const w = worker("w1", 1)
    stepWorker(w, {
      _tag: "Stateless",
      tasks: [
        { tx: tx("s1", ["p"]), proposal: 1, pushTo: "" },
        { tx: tx("s2", ["q"]), proposal: 1, pushTo: "" }
      ]
    })
    expect(w.running.size).toBe(1)
    stepWorker(w, { _tag: "Stateful", tasks: [task(1, tx("a", ["k"]), [0], [GENESIS_SOURCE])] })
    const next = stepWorker(w, { _tag: "UnitDone", unit: [...w.running.keys()][0]!, valid: true })
    const unit = next.find((o) => o._tag === "StartUnit")
    expect(unit).toMatchObject({ verify: "a" })
  })
})

describe("fence generations (§4.6 recovery)", () => {
  // Found by the crash simulator (pnpm sim remora --scenario crash-chaos --seed 27): w2 took a transfer of
  // (k, 3) that w1 had sent in generation 3, while a recovery (generation 4) had w1 run the producer of (k, 3)
  // again. w2 ran its task and sent (k, 4) back to w1 before w1 had consumed the (k, 2) it held for that producer:
  // the newer version replaced the older one (a worker holds one version of a key) and the producer could not run.
  it("drops a lease transfer sent in another generation; the fetch is asked again in its own", () => {
    const w = worker("w2")
    stepWorker(w, { _tag: "Fence", generation: 4 })
    const out = stepWorker(w, {
      _tag: "Stateful",
      tasks: [task(44, tx("t44", ["k"]), [3], ["w1"], { generation: 4 })]
    })
    expect(out).toEqual([{ _tag: "RequestObject", to: "w1", key: "k", version: 3, trace: "" }])
    const stale = {
      _tag: "ObjectArrived",
      key: "k",
      version: 3,
      value: new TextEncoder().encode("k3;"),
      from: "w1"
    } as const
    expect(stepWorker(w, { ...stale, generation: 3 })).toEqual([])
    expect(w.objects.has("k")).toBe(false)
    expect(w.stats.fencedOff).toBe(1)
    // Still fetching: asked again after the retry delay, and the current generation's transfer is taken.
    expect(stepWorker(w, { _tag: "Tick", nowMs: 200 })).toEqual([
      { _tag: "RequestObject", to: "w1", key: "k", version: 3, trace: "" }
    ])
    expect(started(stepWorker(w, { ...stale, generation: 4 }))).toHaveLength(1)
  })

  it("a transfer from a newer generation fences the worker first (its own fence is on the way)", () => {
    const w = worker("w2")
    stepWorker(w, { _tag: "Stateful", tasks: [task(1, tx("a", ["k"]), [3], ["w1"])] })
    const out = stepWorker(w, {
      _tag: "ObjectArrived",
      key: "k",
      version: 3,
      value: new TextEncoder().encode("k3;"),
      from: "w1",
      generation: 1
    })
    expect(out).toEqual([{ _tag: "Fenced", generation: 1 }])
    expect(w.tasks.size).toBe(0)
    expect(w.objects.size).toBe(0)
  })

  it("transfers from the coordinator (no generation) are taken in any generation", () => {
    const w = worker("w2")
    stepWorker(w, { _tag: "Fence", generation: 2 })
    stepWorker(w, {
      _tag: "Stateful",
      tasks: [task(1, tx("a", ["k"]), [3], [COORDINATOR_SOURCE], { generation: 2 })]
    })
    const out = stepWorker(w, {
      _tag: "ObjectArrived",
      key: "k",
      version: 3,
      value: new TextEncoder().encode("k3;"),
      from: COORDINATOR_SOURCE
    })
    expect(started(out)).toHaveLength(1)
  })
})
