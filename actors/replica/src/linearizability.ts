/**
 * Linearizability checker for key-value histories (see `history.ts`): pure, no dependencies.
 *
 * Linearizability is local (Herlihy & Wing): a history is linearizable iff each object's sub-history is, so
 * each key is checked on its own against a register (state: absent | value). That keeps the search
 * exponential in the concurrency on one key, not in the length of the history.
 *
 * Per key, the Wing & Gong search with Lowe's memoization, in Porcupine's "just-in-time" form: calls and
 * returns sit in one time-ordered linked list; an operation whose call comes before the first remaining
 * return may be linearized next (everything that returned before it was called already is), and placing it
 * lifts its call and return out of the list. When no candidate works, the last choice is undone. A
 * configuration (linearized set, register state) is entered at most once, and `maxStates` bounds how many
 * are entered, so a pathological history yields "unknown" instead of hanging. Reductions that keep the
 * search complete but small (greedy reads, lookahead, unknown outcomes placed only where something
 * depends on them) are listed at `search`; a test checks the verdicts against exhaustive enumeration.
 *
 * An operation with unknown outcome (timed out, UNAVAILABLE) gets a return at +∞: it may take effect at any
 * point after its call, and placing it after every completed operation is the same as it never taking
 * effect. An ambiguous read observes nothing and is dropped. Events at the same instant count as
 * concurrent (calls sort before returns): the lenient reading of a clock of limited resolution.
 */
import { formatEntry, formatInterval, formatOperation, type HistoryEntry, type KvOperation } from "./history.js"

export interface CheckOptions {
  /** Limit on configurations entered per key; beyond it the verdict is "unknown". */
  readonly maxStates?: number
}

/**
 * A configuration costs some 10–40 µs and 300 bytes, so the bound is reached within seconds. Realistic
 * histories stay far below it: 3,000 operations of 16 clients on one key enter about 10^4 configurations,
 * a few hundred thousand only with many timed-out writes of few distinct values on one hot key.
 */
export const defaultMaxStates = 500_000

export type LinearizabilityResult =
  | {
      readonly _tag: "Linearizable"
      readonly ok: true
      readonly keys: number
      /** Operations checked (ambiguous reads are dropped, not counted). */
      readonly operations: number
    }
  | {
      readonly _tag: "NotLinearizable"
      readonly ok: false
      readonly key: string
      readonly reason: string
      /** The operation that could not be linearized, those overlapping it, and its latest predecessors. */
      readonly minimalWindow: ReadonlyArray<HistoryEntry>
    }
  | {
      /** The search bound was exceeded: neither verdict is proven. */
      readonly _tag: "Unknown"
      readonly ok: false
      readonly key: string
      readonly reason: string
      /** As for a violation, around the operation the search was stuck on furthest in. */
      readonly minimalWindow: ReadonlyArray<HistoryEntry>
      readonly statesExplored: number
    }

/** Checks every key; reports the first violation in key order, else the first "unknown". */
export const checkLinearizable = (
  entries: ReadonlyArray<HistoryEntry>,
  options: CheckOptions = {}
): LinearizabilityResult => {
  const maxStates = options.maxStates ?? defaultMaxStates
  const byKey = new Map<string, Array<HistoryEntry>>()
  let operations = 0
  for (const entry of entries) {
    assertWellFormed(entry)
    if (entry.op._tag === "Get" && entry.completeMs === undefined) continue
    operations++
    const list = byKey.get(entry.op.key)
    if (list === undefined) byKey.set(entry.op.key, [entry])
    else list.push(entry)
  }
  let unknown: LinearizabilityResult | undefined
  for (const key of [...byKey.keys()].sort()) {
    const result = checkKey(key, byKey.get(key)!, maxStates)
    if (result._tag === "NotLinearizable") return result
    if (result._tag === "Unknown") unknown ??= result
  }
  return unknown ?? { _tag: "Linearizable", ok: true, keys: byKey.size, operations }
}

/** A malformed history is a bug in the recording test, not a verdict: fail loudly. */
const assertWellFormed = (entry: HistoryEntry): void => {
  const fail = (why: string) => {
    throw new Error(`checkLinearizable: malformed entry ${formatEntry(entry)}: ${why}`)
  }
  if (!Number.isFinite(entry.invokeMs)) fail("invokeMs is not finite")
  const completed = entry.completeMs !== undefined
  if (completed && !(entry.completeMs >= entry.invokeMs)) fail("completes before it is invoked")
  const { op } = entry
  if (!completed && op.output !== undefined) fail("has an output but no completion time")
  if (completed && op.output === undefined && op._tag !== "Set") fail("completed without an output")
  if (op._tag === "Get" && op.output?.found === true && op.output.value === undefined) fail("found without a value")
}

const checkKey = (key: string, entries: ReadonlyArray<HistoryEntry>, maxStates: number): LinearizabilityResult => {
  const intern = registerStates(entries)
  // Ids in invocation order: the search's representation of linearized sets relies on it.
  const ops: Array<KeyOp> = [...entries]
    .sort((a, b) => a.invokeMs - b.invokeMs)
    .map((entry) => ({ entry, ...compile(entry.op, intern), returnMs: entry.completeMs ?? Infinity }))
  const outcome = search(ops, maxStates)
  if (outcome._tag === "Linearizable") return { _tag: "Linearizable", ok: true, keys: 1, operations: ops.length }
  const { furthest, statesExplored } = outcome
  const minimalWindow = furthest === undefined ? [] : windowAround(ops, furthest.op)
  if (outcome._tag === "Bounded")
    return {
      _tag: "Unknown",
      ok: false,
      key,
      reason: `unknown (search bound exceeded): ${statesExplored} configurations entered without a verdict (maxStates)`,
      minimalWindow,
      statesExplored
    }
  return { _tag: "NotLinearizable", ok: false, key, reason: explain(ops, furthest!), minimalWindow }
}

// ---- the register model -------------------------------------------------------------------------------

const nil = -1
/** Register states are small integers per key; 0 is absent. */
const absent = 0
/** What a step returns when the recorded output cannot follow the given state. */
const impossible = -1
type Step = (state: number) => number

/**
 * Interns a key's values as states. Values that no operation compares against (no read returned one, no
 * CAS expected or reported one) share one state: nothing tells them apart, and merging them makes
 * timed-out writes of such values interchangeable (reduction 3 of `search`) and configurations that
 * differ only in them identical.
 */
const registerStates = (entries: ReadonlyArray<HistoryEntry>) => {
  const observed = new Set<string>()
  for (const { op } of entries) {
    if (op._tag === "Get" && op.output?.found) observed.add(op.output.value!)
    if (op._tag !== "Cas") continue
    if (op.expected !== null) observed.add(op.expected)
    if (typeof op.output?.current === "string") observed.add(op.output.current)
  }
  const ids = new Map<string | undefined, number>() // `undefined` stands for every unobserved value
  return (value: string | null): number => {
    if (value === null) return absent
    const name = observed.has(value) ? value : undefined
    let id = ids.get(name)
    if (id === undefined) {
      id = ids.size + 1
      ids.set(name, id)
    }
    return id
  }
}

/** What one recorded operation does to the register, in the terms the search needs. */
interface RegisterOp {
  /** The next state; `impossible` where the recorded output contradicts the state. */
  readonly step: Step
  /** Wherever the output is possible the state stays: reads, failed CAS, deleting an absent key. */
  readonly readOnly: boolean
  /** The next state is the same from every state: set, and delete with unknown outcome. */
  readonly stateIndependent: boolean
  /** The one state the operation can follow, or nil. */
  readonly needs: number
  /** The state the operation may leave behind if it changes the state, or nil. */
  readonly produces: number
  /** Equal for operations with the same input (over interned states). */
  readonly signature: string
}

const compile = (op: KvOperation, intern: (value: string | null) => number): RegisterOp => {
  const register = (step: Step, fields: Partial<Omit<RegisterOp, "step" | "signature">>): RegisterOp => ({
    step,
    readOnly: false,
    stateIndependent: false,
    needs: nil,
    produces: nil,
    signature: `${op._tag}:${op._tag === "Cas" ? intern(op.expected) : ""}:${"value" in op ? intern(op.value) : ""}`,
    ...fields
  })
  switch (op._tag) {
    case "Set": {
      const next = intern(op.value)
      return register(() => next, { stateIndependent: true, produces: next })
    }
    case "Delete": {
      if (op.output === undefined) return register(() => absent, { stateIndependent: true, produces: absent })
      if (op.output.existed) return register((s) => (s !== absent ? absent : impossible), { produces: absent })
      return register((s) => (s === absent ? absent : impossible), { readOnly: true, needs: absent })
    }
    case "Get": {
      // Only completed reads get here; assertWellFormed guaranteed the value when found.
      const seen = intern(op.output!.found ? op.output!.value! : null)
      return register((s) => (s === seen ? s : impossible), { readOnly: true, needs: seen })
    }
    case "Cas": {
      const expected = intern(op.expected)
      const next = intern(op.value)
      const out = op.output
      // Unknown outcome: if it took effect, it swapped exactly when the register held `expected`.
      if (out === undefined) return register((s) => (s === expected ? next : s), { produces: next })
      if (out.swapped) {
        const fields = { readOnly: expected === next, needs: expected, produces: next }
        return register((s) => (s === expected ? next : impossible), fields)
      }
      if (out.current === undefined) return register((s) => (s !== expected ? s : impossible), { readOnly: true })
      const current = intern(out.current)
      return register((s) => (s !== expected && s === current ? s : impossible), { readOnly: true, needs: current })
    }
  }
}

// ---- the search -----------------------------------------------------------------------------------------

interface KeyOp extends RegisterOp {
  readonly entry: HistoryEntry
  /** +∞ when the outcome is unknown. */
  readonly returnMs: number
}

/** Where the search got furthest: `op` could not be placed after `depth` others, `writer` wrote last. */
interface Furthest {
  readonly op: number
  readonly depth: number
  readonly writer: number
}

type SearchOutcome =
  | { readonly _tag: "Linearizable" }
  | {
      readonly _tag: "Stuck" | "Bounded"
      readonly statesExplored: number
      readonly furthest: Furthest | undefined
    }

/** A linearized set and the register state after it. */
interface Configuration {
  readonly state: number
  /**
   * Completed operations with id < frontier are linearized, except `holes`. Ids follow invocation order and
   * an operation is placed only when all that returned before its call are, so the holes are operations
   * still open at the frontier: at most one per client, where a bit set would grow with the history.
   */
  readonly frontier: number
  readonly holes: ReadonlyArray<number>
  /**
   * Linearized operations with unknown outcome, as counts per class of identical ones: flat pairs
   * `[class, count, …]` by class. Reduction 3 places each class in invocation order, so counts suffice.
   */
  readonly unknownPlaced: ReadonlyArray<number>
  readonly completedLeft: number
  /** If the last operation placed had an unknown outcome, the state before it (reduction 2), else nil. */
  readonly before: number
}

interface SearchNode {
  readonly configuration: Configuration
  /** The first return in the list: its operation must be placed before anything called after it. */
  readonly blocking: number
  /** The operation to blame if every choice fails: the blocking one, or one the lookahead found starved. */
  readonly blocked: number
  /** Call positions to try, in order. */
  readonly choices: ReadonlyArray<number>
  tried: number
  /** The call the current child placed, to put back when the search returns here. */
  placed: number
}

/** Subsumption compares a new configuration with this many recent ones of the same completed set. */
const subsumptionWindow = 16

/**
 * Depth-first search over configurations, with reductions that keep 16 clients and timed-out writes
 * tractable. Each keeps the search complete: a valid order with the fewest unknown-outcome operations
 * placed can be rearranged into one the search tries.
 *  1. A read-only candidate whose output fits the state is the node's only choice: a valid order placing
 *     it later stays valid with it moved here, as it changes nothing and all that must precede it has.
 *  2. In a fewest-placed order, each unknown-outcome operation is followed by one that depends on it
 *     (behaves differently after it), since an operation nothing depends on can be dropped, i.e. take
 *     effect never. So one is a choice only if some candidate depends on it, and the choices right after
 *     it are its dependents. The search ends once every completed operation is placed.
 *  3. Of identical unknown-outcome operations only the earliest unplaced one is a choice: all are open
 *     from their call to the end, so they are interchangeable.
 *  4. Lookahead: an operation that needs a state the register does not hold must see it written first, by
 *     an unplaced writer called before the operation returns; with none left the node is a dead end. This
 *     catches a wrong order of writes at once, not after exploring everything concurrent with it.
 *  5. Memo with subsumption: a configuration is skipped if one with the same completed operations and
 *     state, a subset of its unknown-outcome operations placed and no narrower choices was entered, since
 *     that one can do all it can.
 * Choices go earliest deadline first: a completed operation's return, or for an unknown-outcome one the
 * earliest return among its dependents.
 */
const search = (ops: ReadonlyArray<KeyOp>, maxStates: number): SearchOutcome => {
  const list = eventList(ops)
  const { next, opOf, isCall } = list
  const unknownOutcome = ops.map((o) => o.returnMs === Infinity)
  const placed = new Uint8Array(ops.length)
  const stepOf = (e: number, state: number): number => ops[opOf[e]!]!.step(state)
  const fits = (e: number, state: number): boolean => stepOf(e, state) !== impossible
  const isUnknown = (e: number): boolean => unknownOutcome[opOf[e]!]!
  /** Whether `e` can follow `state` and then does something else than after `before` (reduction 2). */
  const dependsOn = (e: number, state: number, before: number): boolean => {
    const then = stepOf(e, state)
    return then !== impossible && then !== stepOf(e, before)
  }

  const { previousIdentical, classOf } = identicalUnknown(ops, unknownOutcome)
  const isCanonical = (e: number): boolean => {
    const previous = previousIdentical[opOf[e]!]!
    return previous === nil || placed[previous] === 1
  }
  const starvation = lookahead(ops, placed)
  const memo = memoWithSubsumption(maxStates)

  /** The calls before the first return, and that return (a completed operation is left, so there is one). */
  const candidates = (): { calls: Array<number>; blocking: number } => {
    const calls: Array<number> = []
    let e = next[head]!
    for (; isCall[e] === 1; e = next[e]!) if (!isUnknown(e) || isCanonical(e)) calls.push(e)
    return { calls, blocking: e }
  }

  const enter = (configuration: Configuration): SearchNode => {
    const { calls, blocking } = candidates()
    const { state, before } = configuration
    const node = (choices: ReadonlyArray<number>, blocked = opOf[blocking]!): SearchNode => {
      return { configuration, blocking, blocked, choices, tried: 0, placed: nil }
    }
    const starved = calls.find((e) => starvation.starved(opOf[e]!, state))
    if (starved !== undefined) return node([], opOf[starved]!)
    const eligible = before === nil ? calls : calls.filter((e) => dependsOn(e, state, before))
    const readOnly = eligible.find((e) => ops[opOf[e]!]!.readOnly && fits(e, state))
    if (readOnly !== undefined) return node([readOnly])
    const stateDependent = calls.filter((e) => !ops[opOf[e]!]!.stateIndependent)
    /** The deadline of a choice; NaN for an unknown-outcome operation nothing depends on. */
    const deadline = (e: number): number => {
      if (!isUnknown(e)) return ops[opOf[e]!]!.returnMs
      const after = stepOf(e, state)
      let earliest = Number.NaN
      for (const d of stateDependent) {
        if (d === e || !dependsOn(d, after, state)) continue
        const returnMs = ops[opOf[d]!]!.returnMs
        if (!(earliest <= returnMs)) earliest = returnMs
      }
      return earliest
    }
    const choices = eligible
      .filter((e) => fits(e, state))
      .map((e) => ({ e, deadline: deadline(e) }))
      .filter(({ deadline }) => !Number.isNaN(deadline))
      .sort((a, b) => a.deadline - b.deadline)
      .map(({ e }) => e)
    return node(choices)
  }

  const placeInto = (c: Configuration, op: number): Configuration => {
    const state = ops[op]!.step(c.state)
    if (unknownOutcome[op])
      return { ...c, state, unknownPlaced: countOne(c.unknownPlaced, classOf[op]!), before: c.state }
    const holes =
      op >= c.frontier
        ? c.holes.concat(range(c.frontier, op).filter((h) => !unknownOutcome[h]))
        : c.holes.filter((h) => h !== op)
    const frontier = Math.max(c.frontier, op + 1)
    return { ...c, state, frontier, holes, completedLeft: c.completedLeft - 1, before: nil }
  }

  /** The last placed operation that wrote the register, or nil: names the state in a report. */
  const lastWriter = (): number => {
    for (let i = stack.length - 2; i >= 0; i--) {
      const op = opOf[stack[i]!.placed]!
      const { produces, needs, stateIndependent, step } = ops[op]!
      const before = stack[i]!.configuration.state
      if (produces !== nil && (stateIndependent || needs !== nil || step(before) !== before)) return op
    }
    return nil
  }

  const completed = unknownOutcome.filter((u) => !u).length
  if (completed === 0) return { _tag: "Linearizable" }
  const root = { state: absent, frontier: 0, holes: [], unknownPlaced: [], completedLeft: completed, before: nil }
  const stack: Array<SearchNode> = [enter(root)]
  let furthest: Furthest | undefined
  for (;;) {
    const node = stack[stack.length - 1]!
    if (node.tried < node.choices.length) {
      const call = node.choices[node.tried++]!
      const child = placeInto(node.configuration, opOf[call]!)
      const entered = memo.enter(child)
      if (entered === "covered") continue
      if (entered === "bounded") return { _tag: "Bounded", statesExplored: memo.size(), furthest }
      if (child.completedLeft === 0) return { _tag: "Linearizable" }
      list.lift(call)
      placed[opOf[call]!] = 1
      node.placed = call
      stack.push(enter(child))
      continue
    }
    // Every choice failed: `blocked` cannot be placed after this prefix.
    const depth = stack.length - 1
    if (furthest === undefined || depth > furthest.depth) furthest = { op: node.blocked, depth, writer: lastWriter() }
    stack.pop()
    const parent = stack[stack.length - 1]
    if (parent === undefined) return { _tag: "Stuck", statesExplored: memo.size(), furthest }
    list.unlift(parent.placed)
    const op = opOf[parent.placed]!
    placed[op] = 0
    starvation.unplaced(op)
  }
}

const head = 0

/** Calls and returns in time order, as a doubly linked list over typed arrays; index 0 is the head. */
const eventList = (ops: ReadonlyArray<KeyOp>) => {
  const n = ops.length
  const order = Array.from({ length: 2 * n }, (_, e) => e) // e < n: call of op e; otherwise return of op e - n
  const timeOf = (e: number) => (e < n ? ops[e]!.entry.invokeMs : ops[e - n]!.returnMs)
  // Calls before returns at the same instant: such operations count as concurrent.
  order.sort((a, b) => timeOf(a) - timeOf(b) || Number(a >= n) - Number(b >= n) || a - b)
  const size = 2 * n + 1
  const next = new Int32Array(size)
  const prev = new Int32Array(size)
  const opOf = new Int32Array(size)
  const isCall = new Uint8Array(size)
  const match = new Int32Array(size) // call position → its return position
  const callPosition = new Int32Array(n)
  order.forEach((e, i) => {
    const pos = i + 1
    prev[pos] = i
    next[pos] = pos + 1 < size ? pos + 1 : nil
    opOf[pos] = e < n ? e : e - n
    isCall[pos] = e < n ? 1 : 0
    if (e < n) callPosition[e] = pos
    else match[callPosition[e - n]!] = pos
  })
  next[head] = n > 0 ? 1 : nil
  /** Takes an operation's call and return out of the list. */
  const lift = (call: number) => {
    const ret = match[call]!
    next[prev[call]!] = next[call]!
    prev[next[call]!] = prev[call]! // a call is always followed, at least by its return
    next[prev[ret]!] = next[ret]!
    if (next[ret] !== nil) prev[next[ret]!] = prev[ret]!
  }
  /** Undoes `lift`; lifts are undone in reverse order. */
  const unlift = (call: number) => {
    const ret = match[call]!
    next[prev[ret]!] = ret
    if (next[ret] !== nil) prev[next[ret]!] = ret
    next[prev[call]!] = call
    prev[next[call]!] = call
  }
  return { next, opOf, isCall, lift, unlift }
}

/** Reduction 4: whether an operation can still see the state it needs before it returns. */
const lookahead = (ops: ReadonlyArray<KeyOp>, placed: Uint8Array) => {
  const writers = new Map<number, Array<number>>() // per state, the operations that may produce it, by id
  const writerIndex = new Int32Array(ops.length)
  ops.forEach((o, id) => {
    if (o.produces === nil) return
    const list = writers.get(o.produces) ?? []
    writerIndex[id] = list.push(id) - 1
    writers.set(o.produces, list)
  })
  /** Per state, an index into its writers before which all are placed. */
  const placedBefore = new Map<number, number>()
  const starved = (op: number, state: number): boolean => {
    const { needs, returnMs } = ops[op]!
    if (needs === nil || needs === state) return false
    const list = writers.get(needs) ?? []
    let first = placedBefore.get(needs) ?? 0
    while (first < list.length && placed[list[first]!] === 1) first++
    placedBefore.set(needs, first)
    for (let i = first; i < list.length; i++) {
      const w = list[i]!
      if (w !== op && placed[w] === 0) return ops[w]!.entry.invokeMs > returnMs // the earliest called
    }
    return true
  }
  const unplaced = (op: number) => {
    const { produces } = ops[op]!
    if (produces !== nil) placedBefore.set(produces, Math.min(placedBefore.get(produces) ?? 0, writerIndex[op]!))
  }
  return { starved, unplaced }
}

/** Reduction 5: exact repeats are found through a set, subsumption among recent configurations. */
const memoWithSubsumption = (maxStates: number) => {
  const exact = new Set<string>()
  const recent = new Map<string, Array<Pick<Configuration, "before" | "unknownPlaced">>>()
  const covering = (c: Configuration) => (d: Pick<Configuration, "before" | "unknownPlaced">) =>
    (d.before === nil || d.before === c.before) && countsWithin(d.unknownPlaced, c.unknownPlaced)
  return {
    /** Records `c` as entered, unless an entered configuration covers it or the bound is reached. */
    enter: (c: Configuration): "entered" | "covered" | "bounded" => {
      const completed = `${c.state}:${c.frontier}:${c.holes.join(",")}`
      const key = `${completed}|${c.before}|${c.unknownPlaced.join(",")}`
      if (exact.has(key)) return "covered"
      const known = recent.get(completed)
      if (known?.some(covering(c))) return "covered"
      if (exact.size >= maxStates) return "bounded"
      exact.add(key)
      const entry = { before: c.before, unknownPlaced: c.unknownPlaced }
      if (known === undefined) recent.set(completed, [entry])
      else if (known.push(entry) > subsumptionWindow) known.shift()
      return "entered"
    },
    size: () => exact.size
  }
}

/**
 * Reduction 3: classes of unknown-outcome operations with the same input, and for each such operation the
 * latest earlier one of its class, or nil.
 */
const identicalUnknown = (ops: ReadonlyArray<KeyOp>, unknownOutcome: ReadonlyArray<boolean>) => {
  const latest = new Map<string, number>()
  const classes = new Map<string, number>()
  const previousIdentical = new Int32Array(ops.length).fill(nil)
  const classOf = new Int32Array(ops.length).fill(nil)
  ops.forEach((o, id) => {
    if (!unknownOutcome[id]) return
    previousIdentical[id] = latest.get(o.signature) ?? nil
    latest.set(o.signature, id)
    let c = classes.get(o.signature)
    if (c === undefined) {
      c = classes.size
      classes.set(o.signature, c)
    }
    classOf[id] = c
  })
  return { previousIdentical, classOf }
}

/** Flat `[class, count, …]` pairs with one more of `c`. */
const countOne = (counts: ReadonlyArray<number>, c: number): ReadonlyArray<number> => {
  let i = 0
  while (i < counts.length && counts[i]! < c) i += 2
  if (counts[i] === c) return counts.map((x, j) => (j === i + 1 ? x + 1 : x))
  return [...counts.slice(0, i), c, 1, ...counts.slice(i)]
}

/** Whether every class count in `a` is at most that in `b` (flat pairs, by class). */
const countsWithin = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): boolean => {
  let j = 0
  for (let i = 0; i < a.length; i += 2) {
    while (j < b.length && b[j]! < a[i]!) j += 2
    if (b[j] !== a[i] || b[j + 1]! < a[i + 1]!) return false
  }
  return true
}

const range = (from: number, to: number): Array<number> => Array.from({ length: to - from }, (_, i) => from + i)

// ---- the failure report ---------------------------------------------------------------------------------

/**
 * The blocked operation, everything overlapping it in real time, and its immediate predecessors (those
 * that completed before it was invoked, with no other such one invoked after they completed): enough to
 * see why its result is impossible without reading the whole history.
 */
const windowAround = (ops: ReadonlyArray<KeyOp>, blocked: number): ReadonlyArray<HistoryEntry> => {
  const b = ops[blocked]!
  const start = b.entry.invokeMs
  const latestInvokeBefore = ops.reduce((t, o) => (o.returnMs < start ? Math.max(t, o.entry.invokeMs) : t), -Infinity)
  return ops
    .filter((o) =>
      o.returnMs < start ? o.returnMs >= latestInvokeBefore : o.entry.invokeMs <= b.returnMs && o.returnMs >= start
    )
    .map((o) => o.entry)
}

/** The values an operation claims to have seen in the register (absence aside). */
const seenValues = (op: KvOperation): ReadonlyArray<string> => {
  if (op._tag === "Get" && op.output?.found) return [op.output.value!]
  if (op._tag !== "Cas" || op.output === undefined) return []
  if (op.output.swapped) return op.expected === null ? [] : [op.expected]
  return typeof op.output.current === "string" ? [op.output.current] : []
}

const explain = (ops: ReadonlyArray<KeyOp>, furthest: Furthest): string => {
  const { entry } = ops[furthest.op]!
  const what = `${formatOperation(entry.op)} by process ${entry.process} at ${formatInterval(entry)}`
  const written = new Set(
    ops.flatMap(({ entry: { op } }) => (op._tag === "Set" || op._tag === "Cas" ? [op.value] : []))
  )
  const phantom = seenValues(entry.op).find((v) => !written.has(v))
  if (phantom !== undefined) return `${what} observed ${JSON.stringify(phantom)}, which no operation ever wrote`
  const writer = furthest.writer === nil ? undefined : ops[furthest.writer]!.entry
  const register =
    writer === undefined || !("value" in writer.op)
      ? "absent"
      : `${JSON.stringify(writer.op.value)} (written by ${formatEntry(writer)})`
  return (
    `${what} cannot be linearized: in the longest valid order found (${furthest.depth} of ${ops.length} ` +
    `operations) the register was ${register}, and no other order of the operations still open then ` +
    "admits its result"
  )
}
