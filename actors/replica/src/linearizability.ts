/**
 * Linearizability checker for key-value histories (see `history.ts`), dependency-free and pure.
 *
 * Linearizability is local (Herlihy & Wing): a history is linearizable iff each object's sub-history is, so
 * every key is checked on its own against a register model (state = absent | value). That split is what
 * makes thousands of operations tractable: the search below is exponential in concurrency, not length.
 *
 * Per key, the Wing & Gong search with Lowe's memoization, in Porcupine's "just-in-time" form: call and
 * return events sit in one time-ordered doubly linked list. Walking from the head, an operation whose call
 * is reached before any return may be linearized next (nothing still open returned before it was called);
 * trying it lifts its call and return out of the list. Reaching a return means that operation can no longer
 * be placed, so the last choice is undone. A configuration (set of linearized operations, register state)
 * that was explored once is never explored again, which bounds the work by the number of distinct
 * configurations; `maxStates` bounds that number so a pathological history reports "unknown" instead of
 * hanging.
 *
 * Operations with unknown outcome get a return at +∞: they may be linearized anywhere after their call, and
 * linearizing one after every completed operation is the same as it never taking effect. Reads with unknown
 * outcome observe nothing and are dropped. Events at the same instant count as concurrent (calls sort
 * before returns), the lenient choice for clocks of limited resolution.
 */
import { formatEntry, formatInterval, formatOperation, type HistoryEntry, type KvOperation } from "./history.js"

export interface CheckOptions {
  /** Limit on memoized configurations per key; beyond it the verdict is "unknown". */
  readonly maxStates?: number
}

export const defaultMaxStates = 5_000_000

export type LinearizabilityResult =
  | {
      readonly _tag: "Linearizable"
      readonly ok: true
      readonly keys: number
      /** Operations checked: ambiguous reads are not counted, they are dropped. */
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
      /** Same shape as for a violation, around the deepest blocked operation found before giving up. */
      readonly minimalWindow: ReadonlyArray<HistoryEntry>
      readonly statesExplored: number
    }

/** Checks every key's sub-history; reports the first violation in key order, else the first "unknown". */
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

// ---- register model over interned states -------------------------------------------------------------

const nil = -1

/** Register states are small integers per key: `absent` or the index of an interned value. */
const absent = 0
/** Returned by a step whose recorded output cannot follow the given state. */
const impossible = -1
type Step = (state: number) => number

/** What one recorded operation does to the register, in the terms the search needs. */
interface RegisterOp {
  /** The next state, checked against the output when it is known. */
  readonly step: Step
  /** Wherever the output is possible the state stays as it was: reads, failed CAS, deleting an absent key. */
  readonly readOnly: boolean
  /** The next state is the same from every state: set, and delete with unknown outcome. */
  readonly stateIndependent: boolean
  /** The one state the operation can follow, if there is one. */
  readonly needs: number
  /** The state the operation may leave, if it may change it. */
  readonly produces: number
  /** Equal for operations with the same input over interned states: interchangeable if outcomes are unknown. */
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
      // Unknown outcome: if it took effect it swapped exactly when the register held `expected`.
      if (out === undefined) return register((s) => (s === expected ? next : s), { produces: next })
      if (out.swapped)
        return register((s) => (s === expected ? next : impossible), {
          readOnly: expected === next,
          needs: expected,
          produces: next
        })
      if (out.current === undefined) return register((s) => (s !== expected ? s : impossible), { readOnly: true })
      const current = intern(out.current)
      return register((s) => (s !== expected && s === current ? s : impossible), { readOnly: true, needs: current })
    }
  }
}

// ---- search ---------------------------------------------------------------------------------------------

interface KeyOp extends RegisterOp {
  readonly entry: HistoryEntry
  /** +∞ when the outcome is unknown. */
  readonly returnMs: number
}

type SearchOutcome =
  | { readonly _tag: "Linearizable" }
  | { readonly _tag: "Stuck" | "Bounded"; readonly statesExplored: number; readonly deepest: Deepest | undefined }

/** Where the search got furthest: `op` could not be placed after `depth` linearized operations. */
interface Deepest {
  readonly op: number
  readonly depth: number
  readonly state: number
}

const head = 0

/**
 * A key's register states as small integers, `absent` being 0. Values that no operation compares against
 * (no read returned one, no CAS expected or reported one) share one state: nothing tells them apart, and
 * merging them makes timed-out writes of such values interchangeable (reduction 3 below) and lets
 * configurations that differ only in them coincide in the memo.
 */
const registerStates = (entries: ReadonlyArray<HistoryEntry>) => {
  const observed = new Set<string>()
  for (const { op } of entries) {
    if (op._tag === "Get" && op.output?.found) observed.add(op.output.value!)
    if (op._tag !== "Cas") continue
    if (op.expected !== null) observed.add(op.expected)
    if (typeof op.output?.current === "string") observed.add(op.output.current)
  }
  const names = ["absent"]
  const ids = new Map<string, number>()
  const unobserved = "a value no operation observed"
  const intern = (value: string | null): number => {
    if (value === null) return absent
    const name = observed.has(value) ? JSON.stringify(value) : unobserved
    let id = ids.get(name)
    if (id === undefined) {
      id = names.push(name) - 1
      ids.set(name, id)
    }
    return id
  }
  return { intern, name: (state: number): string => names[state]! }
}

const checkKey = (key: string, entries: ReadonlyArray<HistoryEntry>, maxStates: number): LinearizabilityResult => {
  const states = registerStates(entries)
  // Ids in invocation order: the memo key below relies on it.
  const ops: Array<KeyOp> = [...entries]
    .sort((a, b) => a.invokeMs - b.invokeMs)
    .map((entry) => ({
      entry,
      ...compile(entry.op, states.intern),
      returnMs: entry.completeMs ?? Infinity
    }))
  const outcome = search(ops, maxStates)
  if (outcome._tag === "Linearizable") return { _tag: "Linearizable", ok: true, keys: 1, operations: ops.length }
  const window = outcome.deepest === undefined ? [] : windowAround(ops, outcome.deepest.op)
  if (outcome._tag === "Bounded")
    return {
      _tag: "Unknown",
      ok: false,
      key,
      reason: `unknown (search bound exceeded): explored ${outcome.statesExplored} configurations (maxStates)`,
      minimalWindow: window,
      statesExplored: outcome.statesExplored
    }
  const deepest = outcome.deepest!
  return {
    _tag: "NotLinearizable",
    ok: false,
    key,
    reason: explain(ops, deepest, states.name, writtenValues(entries)),
    minimalWindow: window
  }
}

/** A node's linearized set and register state. */
interface Configuration {
  readonly state: number
  /**
   * Completed operations with id < frontier are linearized, except `holes`. Ids follow invocation order and
   * an operation is only linearized once every operation that returned before its call is, so holes are
   * operations still open at the frontier: at most one per client, where an n-bit set would grow with n.
   */
  readonly frontier: number
  readonly holes: ReadonlyArray<number>
  /** Linearized operations with unknown outcome, ascending: only those that some result depended on. */
  readonly unknownPlaced: ReadonlyArray<number>
  readonly completedLeft: number
}

interface SearchNode {
  readonly configuration: Configuration
  /** The first return in the list: its operation must be placed before anything after it. */
  readonly blocking: number
  /** The operation to blame if every choice here fails: the blocking one, or one the lookahead starved. */
  readonly blocked: number
  /** Call positions to try, in order; phase 2 appends the operations with unknown outcome worth trying. */
  choices: Array<number>
  tried: number
  phase: 1 | 2
  /** The call the current child placed, to restore when backtracking to this node. */
  placed: number
}

/**
 * Porcupine's `checkSingle` as an explicit depth-first search, plus reductions that keep 16 clients and
 * timed-out writes tractable. Each keeps the search complete, by turning any valid order into one the
 * search tries:
 *  1. A read-only candidate whose output fits the state is the node's only choice: a valid order placing
 *     it later stays valid with it moved here, as it changes nothing and all that must precede it has.
 *  2. An operation with unknown outcome is useless where the operation after it behaves the same without
 *     it: moving it to the end (i.e. to never) keeps the order valid. So one is placed only where another
 *     candidate depends on it, and the next choice is then among those dependents. Such operations are
 *     tried after the completed candidates (phase 2), except those the blocked operation needs right away.
 *     The search ends once every completed operation is placed: the rest can take effect never.
 *  3. Of identical unknown-outcome operations only the earliest unplaced one is tried: they are
 *     interchangeable, all being open from their call to the end.
 * Memoization makes each configuration (linearized set, state, and `before` for reduction 2) explored once.
 */
const search = (ops: ReadonlyArray<KeyOp>, maxStates: number): SearchOutcome => {
  const list = eventList(ops)
  const { next, opOf, isCall } = list
  const unknownOutcome = ops.map((o) => o.returnMs === Infinity)
  const placedFlag = new Uint8Array(ops.length)
  const previousIdentical = previousIdenticalUnknown(ops, unknownOutcome)
  // Memo with subsumption: a configuration is skipped if one with the same completed operations and state
  // but a subset of its unknown-outcome operations placed was entered, since that one can do all it can
  // (the extra operations may as well never take effect). Exact repeats are the special case.
  const explored = new Map<string, Array<ReadonlyArray<number>>>()
  let statesExplored = 0
  const completedKey = (c: Configuration) => `${c.state}:${c.frontier}:${c.holes.join(",")}`
  const subsumed = (c: Configuration): boolean =>
    explored.get(completedKey(c))?.some((placed) => isSubset(placed, c.unknownPlaced)) ?? false
  const remember = (c: Configuration) => {
    const key = completedKey(c)
    const known = explored.get(key)
    if (known === undefined) explored.set(key, [c.unknownPlaced])
    else known.push(c.unknownPlaced)
    statesExplored++
  }
  let deepest: Deepest | undefined

  const stepOf = (e: number, state: number): number => ops[opOf[e]!]!.step(state)
  const fits = (e: number, state: number): boolean => stepOf(e, state) !== impossible
  const isUnknown = (e: number): boolean => unknownOutcome[opOf[e]!]!
  /** Reduction 3: of identical unknown-outcome operations only the earliest unplaced one is a choice. */
  const isCanonical = (e: number): boolean => {
    const previous = previousIdentical[opOf[e]!]!
    return previous === nil || placedFlag[previous] === 1
  }
  /** Whether `e` can follow `state` and does something else there than after `before` (reduction 2). */
  const dependsOn = (e: number, state: number, before: number): boolean => {
    const then = stepOf(e, state)
    return then !== impossible && then !== stepOf(e, before)
  }

  // Lookahead: an operation that needs a state the register does not hold must see it written first, by an
  // unplaced writer invoked before the operation returns. With none left, the node is a dead end; this
  // catches a wrong order of writes at once instead of after exploring everything concurrent with it.
  const writers = new Map<number, Array<number>>()
  const writerIndex = new Int32Array(ops.length)
  ops.forEach((o, id) => {
    if (o.produces === nil) return
    const list = writers.get(o.produces) ?? []
    writerIndex[id] = list.push(id) - 1
    writers.set(o.produces, list)
  })
  /** Per state, an index into its writers before which all are placed. */
  const placedBefore = new Map<number, number>()
  const starved = (e: number, state: number): boolean => {
    const op = opOf[e]!
    const { needs, returnMs } = ops[op]!
    if (needs === nil || needs === state) return false
    const list = writers.get(needs) ?? []
    let first = placedBefore.get(needs) ?? 0
    while (first < list.length && placedFlag[list[first]!] === 1) first++
    placedBefore.set(needs, first)
    for (let i = first; i < list.length; i++) {
      const w = list[i]!
      if (w !== op && placedFlag[w] === 0) return ops[w]!.entry.invokeMs > returnMs // ids follow invocation
    }
    return true
  }
  const setPlaced = (op: number, placed: boolean) => {
    placedFlag[op] = placed ? 1 : 0
    const { produces } = ops[op]!
    if (!placed && produces !== nil)
      placedBefore.set(produces, Math.min(placedBefore.get(produces) ?? 0, writerIndex[op]!))
  }

  const candidates = (): { calls: Array<number>; blocking: number } => {
    const calls: Array<number> = []
    let e = next[head]!
    for (; isCall[e] === 1; e = next[e]!) if (!isUnknown(e) || isCanonical(e)) calls.push(e)
    return { calls, blocking: e } // a completed operation is left, so a finite return ends the candidates
  }

  const enter = (configuration: Configuration): SearchNode => {
    const { calls, blocking } = candidates()
    const { state } = configuration
    const node = (choices: Array<number>, phase: 1 | 2, blocked = opOf[blocking]!): SearchNode => ({
      configuration,
      blocking,
      blocked,
      choices,
      tried: 0,
      phase,
      placed: nil
    })
    const starving = calls.find((e) => starved(e, state))
    if (starving !== undefined) return node([], 2, opOf[starving]!)
    const readOnly = calls.find((e) => ops[opOf[e]!]!.readOnly && fits(e, state))
    if (readOnly !== undefined) return node([readOnly], 2)
    // Order: whatever lets the blocked operation go next, then earliest return first. Unknown-outcome
    // operations the blocked one depends on are tried here already, the rest in phase 2.
    const rank = (e: number): number => {
      if (e === blocking) return 0
      return fits(blocking, stepOf(e, state)) ? 1 : 2
    }
    const choices = calls
      .filter((e) => fits(e, state) && (!isUnknown(e) || dependsOn(blocking, stepOf(e, state), state)))
      .map((e) => ({ e, rank: rank(e), returnMs: ops[opOf[e]!]!.returnMs }))
      .sort((a, b) => a.rank - b.rank || a.returnMs - b.returnMs)
      .map(({ e }) => e)
    return node(choices, 1)
  }

  /** Phase 2: unknown-outcome candidates that some other candidate depends on. */
  const unknownChoices = (state: number): Array<number> => {
    const { calls } = candidates()
    const dependents = calls.filter((e) => !ops[opOf[e]!]!.stateIndependent)
    return calls.filter((e) => {
      if (!isUnknown(e)) return false
      const after = stepOf(e, state)
      return after !== state && dependents.some((d) => d !== e && dependsOn(d, after, state))
    })
  }

  const placeInto = (c: Configuration, op: number, state: number): Configuration => {
    if (unknownOutcome[op]) return { ...c, state, unknownPlaced: insertSorted(c.unknownPlaced, op) }
    const holes =
      op >= c.frontier
        ? c.holes.concat(range(c.frontier, op).filter((h) => !unknownOutcome[h]))
        : c.holes.filter((h) => h !== op)
    const frontier = Math.max(c.frontier, op + 1)
    return { ...c, state, frontier, holes, completedLeft: c.completedLeft - 1 }
  }

  const completed = unknownOutcome.filter((u) => !u).length
  if (completed === 0) return { _tag: "Linearizable" }
  const root = { state: absent, frontier: 0, holes: [], unknownPlaced: [], completedLeft: completed }
  const stack: Array<SearchNode> = [enter(root)]
  for (;;) {
    const node = stack[stack.length - 1]!
    if (node.tried === node.choices.length && node.phase === 1) {
      node.phase = 2
      node.choices = node.choices.concat(unknownChoices(node.configuration.state))
    }
    if (node.tried < node.choices.length) {
      const call = node.choices[node.tried++]!
      const op = opOf[call]!
      const child = placeInto(node.configuration, op, stepOf(call, node.configuration.state))
      if (subsumed(child)) continue
      if (statesExplored >= maxStates) return { _tag: "Bounded", statesExplored, deepest }
      remember(child)
      if (child.completedLeft === 0) return { _tag: "Linearizable" }
      list.lift(call)
      setPlaced(op, true)
      node.placed = call
      stack.push(enter(child))
      continue
    }
    // Every choice failed: the operation returning at `blocking` cannot be placed after this prefix.
    const depth = stack.length - 1
    if (deepest === undefined || depth > deepest.depth)
      deepest = { op: node.blocked, depth, state: node.configuration.state }
    stack.pop()
    const parent = stack[stack.length - 1]
    if (parent === undefined) return { _tag: "Stuck", statesExplored, deepest }
    list.unlift(parent.placed)
    setPlaced(opOf[parent.placed]!, false)
  }
}

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

/** For each unknown-outcome operation, the latest earlier one with the same input, or nil. */
const previousIdenticalUnknown = (ops: ReadonlyArray<KeyOp>, unknownOutcome: ReadonlyArray<boolean>): Int32Array => {
  const latest = new Map<string, number>()
  const previous = new Int32Array(ops.length).fill(nil)
  ops.forEach((o, id) => {
    if (!unknownOutcome[id]) return
    previous[id] = latest.get(o.signature) ?? nil
    latest.set(o.signature, id)
  })
  return previous
}

/** Whether ascending `a` is a subset of ascending `b`. */
const isSubset = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): boolean => {
  let j = 0
  for (const x of a) {
    while (j < b.length && b[j]! < x) j++
    if (b[j] !== x) return false
    j++
  }
  return true
}

const insertSorted = (sorted: ReadonlyArray<number>, x: number): ReadonlyArray<number> => {
  const i = sorted.findIndex((y) => y > x)
  return i === -1 ? [...sorted, x] : [...sorted.slice(0, i), x, ...sorted.slice(i)]
}

const range = (from: number, to: number): Array<number> => Array.from({ length: to - from }, (_, i) => from + i)

// ---- failure report -------------------------------------------------------------------------------------

/**
 * The blocked operation, everything overlapping it in real time, and its immediate predecessors (those
 * that completed before it was invoked and are not followed by another such one): enough to see why the
 * result is impossible without reading the whole history.
 */
const windowAround = (ops: ReadonlyArray<KeyOp>, blocked: number): ReadonlyArray<HistoryEntry> => {
  const b = ops[blocked]!
  const start = b.entry.invokeMs
  const before = ops.filter((o) => o.returnMs < start)
  const latestInvokeBefore = before.reduce((latest, o) => Math.max(latest, o.entry.invokeMs), -Infinity)
  return ops
    .filter((o) =>
      o.returnMs < start ? o.returnMs >= latestInvokeBefore : o.entry.invokeMs <= b.returnMs && o.returnMs >= start
    )
    .map((o) => o.entry)
}

const writtenValues = (entries: ReadonlyArray<HistoryEntry>): ReadonlySet<string> =>
  new Set(entries.flatMap(({ op }) => (op._tag === "Set" || op._tag === "Cas" ? [op.value] : [])))

/** The values an operation claims to have observed in the register (not counting absence). */
const observed = (op: KvOperation): ReadonlyArray<string> => {
  if (op._tag === "Get" && op.output?.found) return [op.output.value!]
  if (op._tag === "Cas" && op.output !== undefined) {
    if (op.output.swapped) return op.expected === null ? [] : [op.expected]
    return typeof op.output.current === "string" ? [op.output.current] : []
  }
  return []
}

const explain = (
  ops: ReadonlyArray<KeyOp>,
  deepest: Deepest,
  stateName: (s: number) => string,
  written: ReadonlySet<string>
): string => {
  const { entry } = ops[deepest.op]!
  const what = `${formatOperation(entry.op)} by process ${entry.process} at ${formatInterval(entry)}`
  const phantom = observed(entry.op).find((v) => !written.has(v))
  if (phantom !== undefined) return `${what} observed ${JSON.stringify(phantom)}, which no operation ever wrote`
  return (
    `${what} cannot be linearized: in the longest valid order found (${deepest.depth} of ${ops.length} ` +
    `operations) the register was ${stateName(deepest.state)}, and no reordering of the operations still ` +
    "open then admits its result"
  )
}
