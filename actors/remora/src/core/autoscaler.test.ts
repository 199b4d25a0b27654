import { describe, expect, it } from "vitest"
import {
  type AutoscalerParams,
  AutoscalerParamsError,
  createAutoscaler,
  observe,
  type ScaleDecision,
  type WorkerLoad
} from "./autoscaler.js"
import { Prng } from "./prng.js"

const params: AutoscalerParams = {
  min: 2,
  max: 4,
  highLoad: 100,
  lowLoad: 20,
  sustain: 3,
  coolDownMs: 1_000,
  spawnTimeoutMs: 5_000
}

const pool = (loads: ReadonlyArray<number>, retiring: ReadonlyArray<string> = []): Array<WorkerLoad> =>
  loads.map((load, i) => {
    const id = `w${i + 1}`
    return { id, load, state: retiring.includes(id) ? "retiring" : "active" }
  })

describe("autoscaler policy", () => {
  it("spawns at once below min, once per outstanding spawn", () => {
    const s = createAutoscaler(params)
    expect(observe(s, 0, pool([0]))).toMatchObject({ _tag: "Spawn", reason: "below-min", pool: 1 })
    expect(observe(s, 10, pool([0]))).toBeUndefined()
    // The spawn never shows up: given up after the timeout, then decided again.
    expect(observe(s, 5_000, pool([0]))).toMatchObject({ _tag: "Spawn", reason: "below-min" })
  })

  it("spawns only after a sustained high load, not on one spike", () => {
    const s = createAutoscaler(params)
    expect(observe(s, 0, pool([500, 500]))).toBeUndefined()
    expect(observe(s, 10, pool([500, 500]))).toBeUndefined()
    expect(observe(s, 20, pool([50, 50]))).toBeUndefined() // back in the band: the streak restarts
    expect(observe(s, 30, pool([500, 500]))).toBeUndefined()
    expect(observe(s, 40, pool([500, 500]))).toBeUndefined()
    expect(observe(s, 50, pool([500, 500]))).toMatchObject({ _tag: "Spawn", reason: "load-high", pool: 2 })
  })

  it("waits for the spawned worker and the cool-down before the next decision", () => {
    const s = createAutoscaler(params)
    for (let t = 0; t < 3; t++) observe(s, t, pool([500, 500]))
    expect(s.decisions).toBe(1)
    for (let t = 3; t < 10; t++) expect(observe(s, t, pool([500, 500]))).toBeUndefined()
    // The new worker is there, load still high: the cool-down holds the next spawn.
    for (let t = 10; t < 1_002; t += 100) expect(observe(s, t, pool([500, 500, 500]))).toBeUndefined()
    expect(observe(s, 1_100, pool([500, 500, 500]))).toMatchObject({ _tag: "Spawn", pool: 3 })
  })

  it("never grows above max", () => {
    const s = createAutoscaler(params)
    for (let t = 0; t < 100_000; t += 500) expect(observe(s, t, pool([900, 900, 900, 900]))?._tag).not.toBe("Spawn")
  })

  it("retires the least loaded worker after a sustained low load, the newest on ties", () => {
    const s = createAutoscaler(params)
    observe(s, 0, pool([5, 1, 1]))
    observe(s, 10, pool([5, 1, 1]))
    expect(observe(s, 20, pool([5, 1, 1]))).toMatchObject({ _tag: "Retire", worker: "w3", reason: "load-low" })
  })

  it("holds while a worker retires, and never shrinks below min", () => {
    const s = createAutoscaler({ ...params, coolDownMs: 0 })
    for (let t = 0; t < 3; t++) observe(s, t, pool([0, 0, 0]))
    expect(s.decisions).toBe(1)
    for (let t = 3; t < 50; t++) expect(observe(s, t, pool([0, 0, 0], ["w3"]))).toBeUndefined()
    for (let t = 50; t < 500; t++) expect(observe(s, t, pool([0, 0]))).toBeUndefined()
  })

  it("does not retire when the others would be pushed above highLoad", () => {
    const s = createAutoscaler({ ...params, lowLoad: 60, highLoad: 70 })
    // mean 50 < low 60, but 150 / 2 = 75 > high 70 after a retirement.
    for (let t = 0; t < 20; t++) expect(observe(s, t * 2_000, pool([50, 50, 50]))).toBeUndefined()
  })

  it("retires above max at once", () => {
    const s = createAutoscaler(params)
    expect(observe(s, 0, pool([50, 50, 50, 50, 40]))).toMatchObject({
      _tag: "Retire",
      worker: "w5",
      reason: "above-max"
    })
  })

  it("rejects inconsistent parameters with a typed error", () => {
    expect(() => createAutoscaler({ ...params, lowLoad: 100 })).toThrow(AutoscalerParamsError)
    expect(() => createAutoscaler({ ...params, min: 0 })).toThrow(AutoscalerParamsError)
    expect(() => createAutoscaler({ ...params, max: 1 })).toThrow(AutoscalerParamsError)
  })

  it("is deterministic and keeps the pool in [min, max] under a random load", () => {
    const run = (seed: number) => {
      const prng = new Prng(seed)
      const s = createAutoscaler(params)
      let loads = [0, 0]
      let retiring: string | undefined
      const log: Array<ScaleDecision> = []
      for (let t = 0; t < 2_000; t++) {
        const level = prng.chance(0.5) ? 300 : 5
        loads = loads.map(() => prng.int(0, level))
        if (retiring !== undefined && prng.chance(0.2)) {
          loads = loads.filter((_, i) => `w${i + 1}` !== retiring)
          retiring = undefined
        }
        const d = observe(s, t * 400, pool(loads, retiring === undefined ? [] : [retiring]))
        if (d === undefined) continue
        log.push(d)
        // Spawns arrive at once; a retiring worker drains for a while, then leaves.
        if (d._tag === "Spawn") loads = [...loads, 0]
        else retiring = d.worker
        const active = loads.length - (retiring === undefined ? 0 : 1)
        expect(active).toBeGreaterThanOrEqual(params.min)
        expect(active).toBeLessThanOrEqual(params.max)
      }
      return log
    }
    const a = run(7)
    expect(a.length).toBeGreaterThan(2)
    expect(a.some((d) => d._tag === "Spawn") && a.some((d) => d._tag === "Retire")).toBe(true)
    expect(run(7)).toEqual(a)
  })
})
