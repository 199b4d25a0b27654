import { describe, expect, it } from "vitest"
import { WorkerPool } from "./worker-pool.js"

const ref = (id: string, incarnation = "a") => ({ id, incarnation })
const ids = (refs: ReadonlyArray<{ readonly id: string }>) => refs.map((r) => r.id)

describe("WorkerPool", () => {
  it("without autoscaling every present worker is active and none is a spare", () => {
    const pool = new WorkerPool(undefined)
    pool.setPresent([ref("w1"), ref("w2"), ref("w3")])
    expect(ids(pool.active())).toEqual(["w1", "w2", "w3"])
    expect(pool.spares()).toEqual([])
    expect(pool.activate()).toBeUndefined()
  })

  it("fills the pool to min in id order; the rest are spares a scale-out activates one at a time", () => {
    const pool = new WorkerPool(2)
    pool.setPresent([ref("w1")])
    expect(ids(pool.active())).toEqual(["w1"])
    pool.setPresent([ref("w1"), ref("w2"), ref("w3"), ref("w4")])
    expect(ids(pool.active())).toEqual(["w1", "w2"])
    expect(ids(pool.spares())).toEqual(["w3", "w4"])
    expect(pool.activate()).toEqual(ref("w3"))
    expect(ids(pool.active())).toEqual(["w1", "w2", "w3"])
    expect(pool.view(new Set(["w2"])).map((m) => `${m.worker}:${m.state}`)).toEqual([
      "w1:active",
      "w2:retiring",
      "w3:active",
      "w4:spare"
    ])
  })

  it("keeps an active id's slot across a restart, and gives the slot up when it leaves", () => {
    const pool = new WorkerPool(1)
    pool.setPresent([ref("w1"), ref("w2")])
    expect(ids(pool.active())).toEqual(["w1"])
    // A restart: the same id, a new incarnation, still in the pool (the core recovers it).
    pool.setPresent([ref("w1", "b"), ref("w2")])
    expect(pool.active()).toEqual([ref("w1", "b")])
    // It left: a spare takes its place, and when it comes back it is the spare.
    pool.setPresent([ref("w2")])
    expect(ids(pool.active())).toEqual(["w2"])
    pool.setPresent([ref("w1", "c"), ref("w2")])
    expect(ids(pool.active())).toEqual(["w2"])
    expect(ids(pool.spares())).toEqual(["w1"])
  })

  it("never activates a retired incarnation again; a new process of its id is a spare", () => {
    const pool = new WorkerPool(1)
    pool.setPresent([ref("w1"), ref("w2")])
    pool.activate()
    pool.retire(ref("w2"))
    expect(ids(pool.active())).toEqual(["w1"])
    expect(pool.spares()).toEqual([])
    expect(pool.activate()).toBeUndefined()
    expect(pool.retiredPresent()).toEqual([ref("w2")])
    expect(pool.view(new Set()).map((m) => m.worker)).toEqual(["w1"])
    pool.setPresent([ref("w1"), ref("w2", "b")])
    expect(pool.retiredPresent()).toEqual([])
    expect(pool.spares()).toEqual([ref("w2", "b")])
    expect(pool.activate()).toEqual(ref("w2", "b"))
  })

  it("a retirement of an old incarnation does not take the slot of the id's newer process", () => {
    const pool = new WorkerPool(1)
    pool.setPresent([ref("w1"), ref("w2")])
    pool.activate()
    pool.setPresent([ref("w1"), ref("w2", "b")])
    pool.retire(ref("w2", "a"))
    expect(pool.active()).toEqual([ref("w1"), ref("w2", "b")])
  })
})
