/**
 * Herlihy & Wing: "each operation should appear to take effect instantaneously at some moment between its
 * invocation and response". The hand-written histories below are the classic ways a store breaks that;
 * the randomized ones come from a real sequential store driven at random linearization points; and on
 * small histories the verdict must match that definition executed by brute force.
 */
import { describe, expect, it } from "vitest"
import type { HistoryEntry, KvInput, KvOperation } from "./history.js"
import { checkLinearizable, type LinearizabilityResult } from "./linearizability.js"

// ---- hand-written histories ----------------------------------------------------------------------------

const set = (value: string, key = "k"): KvOperation => ({ _tag: "Set", key, value, output: { ok: true } })
const get = (value: string | null, key = "k"): KvOperation => ({
  _tag: "Get",
  key,
  output: value === null ? { found: false } : { found: true, value }
})
const del = (existed: boolean, key = "k"): KvOperation => ({ _tag: "Delete", key, output: { existed } })
const cas = (expected: string | null, value: string, swapped: boolean, current?: string | null): KvOperation => ({
  _tag: "Cas",
  key: "k",
  expected,
  value,
  output: current === undefined ? { swapped } : { swapped, current }
})

/** `[invokeMs, completeMs]`; a missing completion is an ambiguous outcome, which carries no output. */
const at = (process: number, [invokeMs, completeMs]: [number, number?], op: KvOperation): HistoryEntry => {
  if (completeMs !== undefined) return { process, op, invokeMs, completeMs }
  const { output: _unknown, ...input } = op
  return { process, op: input as KvInput, invokeMs }
}

const violation = (result: LinearizabilityResult) => {
  if (result._tag !== "NotLinearizable") throw new Error(`expected a violation, got ${JSON.stringify(result)}`)
  return result
}

describe("linearizable histories pass", () => {
  it("a sequential history", () => {
    const result = checkLinearizable([
      at(1, [0, 1], get(null)),
      at(1, [2, 3], set("a")),
      at(2, [4, 5], cas("a", "b", true)),
      at(1, [6, 7], cas("a", "c", false, "b")),
      at(2, [8, 9], get("b")),
      at(1, [10, 11], del(true)),
      at(2, [12, 13], del(false)),
      at(1, [14, 15], cas(null, "d", true)),
      at(1, [16, 17], get("d"))
    ])
    expect(result).toEqual({ _tag: "Linearizable", ok: true, keys: 1, operations: 9 })
  })

  it("overlapping writes with reads seeing either value", () => {
    const writes = [at(1, [0, 10], set("a")), at(2, [1, 9], set("b"))]
    for (const seen of ["a", "b"]) expect(checkLinearizable([...writes, at(3, [2, 8], get(seen))]).ok).toBe(true)
    // Reads after both writes agree on whichever took effect last.
    expect(checkLinearizable([...writes, at(3, [11, 12], get("a")), at(3, [13, 14], get("a"))]).ok).toBe(true)
    // A read overlapping a write may still see the value before it.
    expect(checkLinearizable([at(1, [0, 1], set("a")), at(2, [2, 5], set("b")), at(3, [3, 4], get("a"))]).ok).toBe(true)
  })

  it("events at the same instant count as concurrent", () => {
    expect(checkLinearizable([at(1, [0, 5], set("a")), at(2, [5, 6], get(null))]).ok).toBe(true)
  })

  it("keys are checked independently (linearizability is local)", () => {
    const result = checkLinearizable([
      at(1, [0, 1], set("a", "x")),
      at(2, [2, 3], set("b", "y")),
      at(1, [4, 5], get("a", "x")),
      at(2, [4, 5], get("b", "y"))
    ])
    expect(result).toEqual({ _tag: "Linearizable", ok: true, keys: 2, operations: 4 })
  })
})

describe("classic violations fail", () => {
  it("a stale read: the read starts after a write completed but returns the older value", () => {
    const result = violation(
      checkLinearizable([at(1, [0, 1], set("a")), at(1, [2, 3], set("b")), at(2, [4, 5], get("a"))])
    )
    expect(result.key).toBe("k")
    expect(result.reason).toMatch(/get\("k"\) → "a" by process 2 .* cannot be linearized: .* the register was "b"/)
    // The read, and the write that immediately precedes it.
    expect(result.minimalWindow.map((e) => e.op)).toEqual([set("b"), get("a")])
  })

  it("a read returning a value never written", () => {
    const result = violation(checkLinearizable([at(1, [0, 2], set("a")), at(2, [1, 3], get("z"))]))
    expect(result.reason).toMatch(/observed "z", which no operation ever wrote/)
    expect(result.minimalWindow).toHaveLength(2)
  })

  it("two CAS with the same expected value both swapping", () => {
    const result = violation(
      checkLinearizable([
        at(1, [0, 1], set("a")),
        at(2, [2, 6], cas("a", "b", true)),
        at(3, [3, 5], cas("a", "c", true))
      ])
    )
    expect(result.minimalWindow.map((e) => e.process).sort()).toEqual([1, 2, 3])
  })

  it("a lost update: an acknowledged write vanishes", () => {
    expect(checkLinearizable([at(1, [0, 1], set("a")), at(2, [2, 3], get(null))]).ok).toBe(false)
    expect(checkLinearizable([at(1, [0, 1], set("a")), at(2, [2, 3], del(false))]).ok).toBe(false)
    // Two clients increment through CAS from the same read; both succeed, so one increment is lost.
    const increments = [
      at(1, [0, 1], set("0")),
      at(1, [2, 3], get("0")),
      at(2, [2, 3], get("0")),
      at(1, [4, 6], cas("0", "1", true)),
      at(2, [5, 7], cas("0", "1", true))
    ]
    expect(checkLinearizable(increments).ok).toBe(false)
  })

  it("a read going back in time: r1 sees the new value, a later non-overlapping r2 the old one", () => {
    const writes = [at(1, [0, 1], set("a")), at(1, [2, 10], set("b"))]
    const result = violation(checkLinearizable([...writes, at(2, [3, 4], get("b")), at(3, [5, 6], get("a"))]))
    expect(result.reason).toMatch(/^get\("k"\) → "a" by process 3 at \[5.0, 6.0\] cannot be linearized/)
    expect(result.minimalWindow.map((e) => e.process)).toEqual([1, 2, 3])
    // Overlapping reads may disagree that way: r2 may take effect before r1.
    expect(checkLinearizable([...writes, at(2, [3, 6], get("b")), at(3, [5, 7], get("a"))]).ok).toBe(true)
  })

  it("a failed CAS reporting a current value the register cannot hold", () => {
    expect(checkLinearizable([at(1, [0, 1], set("a")), at(2, [2, 3], cas("x", "y", false, "b"))]).ok).toBe(false)
    expect(checkLinearizable([at(1, [0, 1], set("a")), at(2, [2, 3], cas("a", "y", false))]).ok).toBe(false)
  })
})

describe("operations with unknown outcome (timed out, UNAVAILABLE)", () => {
  const before = [at(1, [0, 1], set("a"))]
  const timedOutWrite = at(2, [2], set("b"))

  it("may have taken effect, or not, at any point after their invocation", () => {
    expect(checkLinearizable([...before, timedOutWrite, at(3, [10, 11], get("b"))]).ok).toBe(true)
    expect(checkLinearizable([...before, timedOutWrite, at(3, [10, 11], get("a"))]).ok).toBe(true)
    // Taking effect late, between two reads.
    expect(checkLinearizable([...before, timedOutWrite, at(3, [10, 11], get("a")), at(3, [20, 21], get("b"))]).ok).toBe(
      true
    )
    const timedOutCas = at(2, [2], cas("a", "c", true))
    for (const seen of ["a", "c"])
      expect(checkLinearizable([...before, timedOutCas, at(3, [5, 6], get(seen))]).ok).toBe(true)
    const timedOutDelete = at(2, [2], del(true))
    for (const seen of ["a", null])
      expect(checkLinearizable([...before, timedOutDelete, at(3, [5, 6], get(seen))]).ok).toBe(true)
  })

  it("take effect at most once, and never before their invocation", () => {
    expect(checkLinearizable([...before, timedOutWrite, at(3, [10, 11], get("b")), at(3, [20, 21], get("a"))]).ok).toBe(
      false
    )
    expect(checkLinearizable([...before, at(3, [2, 3], get("b")), at(2, [5], set("b"))]).ok).toBe(false)
  })

  it("ambiguous reads observe nothing and are dropped", () => {
    const result = checkLinearizable([...before, at(2, [2], get("never-checked"))])
    expect(result).toEqual({ _tag: "Linearizable", ok: true, keys: 1, operations: 1 })
  })
})

describe("the search bound", () => {
  // Twelve concurrent writes then an impossible read: refuting it visits every subset of the writes.
  const history = [...Array.from({ length: 12 }, (_, i) => at(i, [0, 10], set(`v${i}`))), at(12, [11, 12], get(null))]

  it("reports unknown, not a verdict, when exceeded", () => {
    const result = checkLinearizable(history, { maxStates: 100 })
    expect(result._tag).toBe("Unknown")
    expect(result.ok).toBe(false)
    if (result._tag === "Unknown") {
      expect(result.reason).toMatch(/unknown \(search bound exceeded\)/)
      expect(result.statesExplored).toBe(100)
    }
  })

  it("reaches the verdict within the default bound", () => {
    expect(violation(checkLinearizable(history)).minimalWindow).toHaveLength(13)
  })

  it("a violation on another key still wins over unknown", () => {
    const other = [at(1, [0, 1], set("a", "other")), at(2, [2, 3], get(null, "other"))]
    const result = violation(checkLinearizable([...history, ...other], { maxStates: 100 }))
    expect(result.key).toBe("other")
  })
})

// ---- randomized histories --------------------------------------------------------------------------------

/** mulberry32: a small seeded PRNG, so every generated history is reproducible from its seed. */
const prng = (seed: number) => {
  let a = seed >>> 0
  return (): number => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

interface Generation {
  readonly processes: number
  readonly operations: number
  readonly keys: number
  /** Values to pick from; few make duplicates common (hard for the search), 0 makes every write unique. */
  readonly values: number
  readonly ambiguousRate: number
}

/** The store the history is generated from: a plain map, independent of the checker's register model. */
const apply = (store: Map<string, string>, input: KvInput): KvOperation => {
  const current = store.get(input.key) ?? null
  switch (input._tag) {
    case "Set":
      store.set(input.key, input.value)
      return { ...input, output: { ok: true } }
    case "Get":
      return { ...input, output: current === null ? { found: false } : { found: true, value: current } }
    case "Delete":
      store.delete(input.key)
      return { ...input, output: { existed: current !== null } }
    case "Cas":
      if (current !== input.expected) return { ...input, output: { swapped: false, current } }
      store.set(input.key, input.value)
      return { ...input, output: { swapped: true } }
  }
}

/**
 * Each process runs operations back to back; each operation takes effect at a random point inside its
 * call, and an ambiguous one at a random point after its invocation (possibly long after) or never.
 * Outputs come from applying everything to the store in linearization-point order.
 */
const generate = (seed: number, g: Generation): Array<HistoryEntry> => {
  const rand = prng(seed)
  const pick = (n: number) => Math.floor(rand() * n)
  const written: Array<string> = []
  const value = () => {
    const v = g.values === 0 ? `u${written.length}` : `v${pick(g.values)}`
    written.push(v)
    return v
  }
  // A CAS expects a recently written value, as a client that read it would.
  const expected = () =>
    written.length === 0 || rand() < 0.2 ? null : written[written.length - 1 - pick(Math.min(4, written.length))]!
  const randomInput = (key: string): KvInput => {
    const r = rand()
    if (r < 0.4) return { _tag: "Get", key }
    if (r < 0.65) return { _tag: "Set", key, value: value() }
    if (r < 0.75) return { _tag: "Delete", key }
    return { _tag: "Cas", key, expected: expected(), value: value() }
  }
  const timeoutMs = 10
  const clockMs = Array.from({ length: g.processes }, () => rand() * 5)
  const planned = Array.from({ length: g.operations }, () => {
    const process = pick(g.processes)
    const invokeMs = clockMs[process]!
    const ambiguous = rand() < g.ambiguousRate
    const durationMs = rand() * timeoutMs
    const effectMs = ambiguous ? invokeMs + rand() * timeoutMs * 10 : invokeMs + rand() * durationMs
    const completeMs = ambiguous ? undefined : invokeMs + durationMs
    clockMs[process] = (completeMs ?? invokeMs + timeoutMs) + rand() * 2
    const input = randomInput(`key${pick(g.keys)}`)
    return { process, input, invokeMs, completeMs, effectMs, takesEffect: !ambiguous || rand() < 0.5 }
  })
  const store = new Map<string, string>()
  const outputs = new Map<(typeof planned)[number], KvOperation>()
  for (const p of [...planned].sort((a, b) => a.effectMs - b.effectMs))
    if (p.takesEffect) outputs.set(p, apply(store, p.input))
  return planned.map(({ process, input, invokeMs, completeMs }, i) =>
    completeMs === undefined
      ? { process, op: input, invokeMs }
      : { process, op: outputs.get(planned[i]!)!, invokeMs, completeMs }
  )
}

const completedGets = (history: ReadonlyArray<HistoryEntry>): Array<number> =>
  history.flatMap((e, i) => (e.op._tag === "Get" && e.completeMs !== undefined ? [i] : []))

/** Replaces one read's result. */
const mutateRead = (history: ReadonlyArray<HistoryEntry>, index: number, value: string | null) =>
  history.map((e, i) => (i === index ? { ...e, op: get(value, e.op.key) } : e))

const moderate: Generation = { processes: 6, operations: 300, keys: 3, values: 3, ambiguousRate: 0.05 }

describe("randomized histories from a sequential store", () => {
  it("are all linearizable", () => {
    for (let seed = 1; seed <= 40; seed++) {
      const result = checkLinearizable(generate(seed, moderate))
      expect(result, `seed=${seed}`).toMatchObject({ ok: true, keys: 3 })
    }
  })

  it("fail when any read of a sequential history is changed", () => {
    const sequential: Generation = { processes: 1, operations: 60, keys: 1, values: 3, ambiguousRate: 0 }
    const history = generate(7, sequential)
    const gets = completedGets(history)
    expect(gets.length).toBeGreaterThan(10)
    for (const index of gets) {
      const op = history[index]!.op
      const seen = op._tag === "Get" && op.output?.found ? op.output.value! : null
      const other = seen === "v0" ? null : "v0"
      expect(checkLinearizable(mutateRead(history, index, other)).ok, `read #${index}`).toBe(false)
    }
  })

  it("fail when a concurrent read returns a value never written", () => {
    for (let seed = 1; seed <= 10; seed++) {
      const history = generate(seed, moderate)
      const gets = completedGets(history)
      const result = violation(checkLinearizable(mutateRead(history, gets[seed % gets.length]!, "phantom")))
      expect(result.reason, `seed=${seed}`).toMatch(/"phantom", which no operation ever wrote/)
    }
  })

  it("usually fail when a concurrent read returns another written value", () => {
    let failed = 0
    const seeds = 30
    for (let seed = 1; seed <= seeds; seed++) {
      const history = generate(seed, moderate)
      const gets = completedGets(history)
      const index = gets[Math.floor(gets.length / 2)]!
      const op = history[index]!.op
      const seen = op._tag === "Get" && op.output?.found ? op.output.value! : null
      const result = checkLinearizable(mutateRead(history, index, seen === "v1" ? "v2" : "v1"))
      expect(result._tag, `seed=${seed}`).not.toBe("Unknown")
      if (!result.ok) failed++
    }
    // Some mutations stay linearizable: a concurrent write of the new value can explain them.
    expect(failed).toBeGreaterThan(seeds / 2)
  })
})

// ---- agreement with exhaustive enumeration ----------------------------------------------------------------

/** Whether a recorded output is what the store answered; a failed CAS need not report the current value. */
const sameOutput = (recorded: KvOperation, store: KvOperation): boolean => {
  if (recorded._tag === "Cas" && store._tag === "Cas" && recorded.output?.current === undefined)
    return recorded.output?.swapped === store.output?.swapped
  return JSON.stringify(recorded.output) === JSON.stringify(store.output)
}

/**
 * The definition, executed: try every order that respects real time, each unknown-outcome operation taking
 * effect somewhere or never, memoized on (placed set, value). Exponential: only for a handful of operations.
 */
const linearizableByEnumeration = (history: ReadonlyArray<HistoryEntry>): boolean => {
  const ops = history.filter((e) => e.op._tag !== "Get" || e.completeMs !== undefined)
  const failed = new Set<string>()
  const explore = (placed: number, value: string | null): boolean => {
    const open = ops.map((_, i) => i).filter((i) => (placed & (1 << i)) === 0)
    if (open.every((i) => ops[i]!.completeMs === undefined)) return true
    const memo = `${placed}:${value}`
    if (failed.has(memo)) return false
    for (const i of open) {
      const { op, invokeMs, completeMs } = ops[i]!
      // Nothing still open may have returned before this one was called.
      if (open.some((j) => (ops[j]!.completeMs ?? Infinity) < invokeMs)) continue
      const store = new Map(value === null ? [] : [[op.key, value]])
      const answered = apply(store, op)
      if (completeMs !== undefined && !sameOutput(op, answered)) continue
      if (explore(placed | (1 << i), store.get(op.key) ?? null)) return true
    }
    failed.add(memo)
    return false
  }
  return explore(0, null)
}

/** Some other result for a completed operation, from the same few values. */
const randomResult = (op: KvOperation, rand: () => number): KvOperation => {
  const value = () => (rand() < 0.25 ? null : `v${Math.floor(rand() * 3)}`)
  switch (op._tag) {
    case "Set":
      return op
    case "Get":
      return get(value(), op.key)
    case "Delete":
      return { ...op, output: { existed: rand() < 0.5 } }
    case "Cas":
      return { ...op, output: rand() < 0.5 ? { swapped: true } : { swapped: false, current: value() } }
  }
}

describe("agreement with exhaustive enumeration", () => {
  it("on small random histories, linearizable or not", () => {
    let linearizable = 0
    const histories = 1500
    for (let seed = 1; seed <= histories; seed++) {
      const rand = prng(seed)
      const history = generate(seed, { processes: 4, operations: 9, keys: 1, values: 3, ambiguousRate: 0.15 })
      // Mutate a result now and then, so that about half of the histories are violations.
      const mutated = history.map((e) =>
        e.completeMs !== undefined && rand() < 0.25 ? { ...e, op: randomResult(e.op, rand) } : e
      )
      const expected = linearizableByEnumeration(mutated)
      if (expected) linearizable++
      expect(checkLinearizable(mutated).ok, `seed=${seed}`).toBe(expected)
    }
    expect(linearizable).toBeGreaterThan(histories / 4)
    expect(linearizable).toBeLessThan((histories * 3) / 4)
  })
})

describe("history sizes the integration tests produce", () => {
  it("2,000 operations over 8 processes on 20 keys", () => {
    const history = generate(2024, { processes: 8, operations: 2000, keys: 20, values: 0, ambiguousRate: 0.02 })
    expect(checkLinearizable(history)).toMatchObject({ ok: true, keys: 20 })
  })

  it("3,000 operations over 16 processes on one key", () => {
    const history = generate(99, { processes: 16, operations: 3000, keys: 1, values: 4, ambiguousRate: 0.02 })
    expect(checkLinearizable(history)).toMatchObject({ ok: true, keys: 1 })
  })
})
