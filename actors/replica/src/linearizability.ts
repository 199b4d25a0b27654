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

/** Register states are small integers per key: `absent` or the index of an interned value. */
const absent = 0
/** Returned by a step whose recorded output cannot follow the given state. */
const impossible = -1
type Step = (state: number) => number

/**
 * The register's transition for one recorded operation, checked against its output when known.
 * `readOnly`: wherever the output is possible the state stays as it was (reads, failed CAS, deleting an
 * absent key), which lets the search place the operation greedily (see `search`).
 */
const compile = (op: KvOperation, intern: (value: string) => number): { step: Step; readOnly: boolean } => {
  switch (op._tag) {
    case "Set": {
      const next = intern(op.value)
      return { step: () => next, readOnly: false }
    }
    case "Delete": {
      if (op.output === undefined) return { step: () => absent, readOnly: false }
      if (op.output.existed) return { step: (s) => (s !== absent ? absent : impossible), readOnly: false }
      return { step: (s) => (s === absent ? absent : impossible), readOnly: true }
    }
    case "Get": {
      // Only completed reads get here; assertWellFormed guaranteed the value when found.
      const seen = op.output!.found ? intern(op.output!.value!) : absent
      return { step: (s) => (s === seen ? s : impossible), readOnly: true }
    }
    case "Cas": {
      const expected = op.expected === null ? absent : intern(op.expected)
      const next = intern(op.value)
      const out = op.output
      // Unknown outcome: if it took effect it swapped exactly when the register held `expected`.
      if (out === undefined) return { step: (s) => (s === expected ? next : s), readOnly: false }
      if (out.swapped) return { step: (s) => (s === expected ? next : impossible), readOnly: expected === next }
      if (out.current === undefined) return { step: (s) => (s !== expected ? s : impossible), readOnly: true }
      const current = out.current === null ? absent : intern(out.current)
      return { step: (s) => (s !== expected && s === current ? s : impossible), readOnly: true }
    }
  }
}

// ---- search ---------------------------------------------------------------------------------------------

interface KeyOp {
  readonly entry: HistoryEntry
  readonly step: Step
  readonly readOnly: boolean
  /** Set, and delete with unknown outcome: the result does not depend on the state. */
  readonly stateIndependent: boolean
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

const nil = -1
const head = 0

const checkKey = (key: string, entries: ReadonlyArray<HistoryEntry>, maxStates: number): LinearizabilityResult => {
  const values: Array<string> = []
  const interned = new Map<string, number>()
  const intern = (value: string): number => {
    let id = interned.get(value)
    if (id === undefined) {
      values.push(value)
      id = values.length // 0 is `absent`
      interned.set(value, id)
    }
    return id
  }
  // Ids in invocation order: the memo key below relies on it.
  const ops: Array<KeyOp> = [...entries]
    .sort((a, b) => a.invokeMs - b.invokeMs)
    .map((entry) => ({
      entry,
      ...compile(entry.op, intern),
      stateIndependent: entry.op._tag === "Set" || (entry.op._tag === "Delete" && entry.completeMs === undefined),
      returnMs: entry.completeMs ?? Infinity
    }))
  const outcome = search(ops, maxStates)
  if (outcome._tag === "Linearizable") return { _tag: "Linearizable", ok: true, keys: 1, operations: ops.length }
  const stateName = (s: number) => (s === absent ? "absent" : JSON.stringify(values[s - 1]))
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
    reason: explain(ops, deepest, stateName, writtenValues(entries)),
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
  /** The first return in the list: its operation is the one blocked if every choice here fails. */
  readonly blocking: number
  /** Call positions to try, in order; phase 2 appends the operations with unknown outcome worth trying. */
  choices: Array<number>
  tried: number
  phase: 1 | 2
  /** The call the current child placed, to restore when backtracking to this node. */
  placed: number
}

/**
 * Porcupine's `checkSingle` as an explicit depth-first search, plus reductions that keep 16 clients and
 * timed-out writes tractable (each keeps the search complete; the argument is in the comment):
 *  1. A read-only candidate whose output fits the state is the node's only choice: any valid order placing
 *     it later stays valid with it moved here, as it changes nothing and everything that must precede it
 *     already has.
 *  2. Operations with unknown outcome are tried only after every completed candidate failed (phase 2), and
 *     only if placing one changes what some other candidate can do: in any valid order, an unknown-outcome
 *     operation whose next operation behaves the same without it can be moved to the end, i.e. to never.
 *     For the same reason the search ends once every completed operation is placed.
 *  3. Of identical unknown-outcome operations only the earliest unplaced one is tried: they are
 *     interchangeable, all being open from their call to the end.
 * Events live in typed arrays (index 0 is the list head) so lifting and restoring an operation are four
 * pointer updates each.
 */
const search = (ops: ReadonlyArray<KeyOp>, maxStates: number): SearchOutcome => {
  const n = ops.length
  const list = eventList(ops)
  const { next, opOf, isCall } = list
  const unknownOutcome = ops.map((o) => o.returnMs === Infinity)
  const placedFlag = new Uint8Array(n)
  const previousIdentical = previousIdenticalUnknown(ops, unknownOutcome)
  const explored = new Set<string>()
  let deepest: Deepest | undefined

  const placeInto = (c: Configuration, op: number, state: number): Configuration => {
    if (unknownOutcome[op]) return { ...c, state, unknownPlaced: insertSorted(c.unknownPlaced, op) }
    const holes =
      op >= c.frontier
        ? c.holes.concat(range(c.frontier, op).filter((h) => !unknownOutcome[h]))
        : c.holes.filter((h) => h !== op)
    return {
      state,
      frontier: Math.max(c.frontier, op + 1),
      holes,
      unknownPlaced: c.unknownPlaced,
      completedLeft: c.completedLeft - 1
    }
  }

  const candidates = (): { calls: Array<number>; blocking: number } => {
    const calls: Array<number> = []
    let e = next[head]!
    for (; isCall[e] === 1; e = next[e]!) calls.push(e)
    return { calls, blocking: e } // a completed operation is left, so a finite return ends the candidates
  }

  const enter = (configuration: Configuration): SearchNode => {
    const { calls, blocking } = candidates()
    const { state } = configuration
    const readOnly = calls.find((e) => ops[opOf[e]!]!.readOnly && ops[opOf[e]!]!.step(state) !== impossible)
    if (readOnly !== undefined) return { configuration, blocking, choices: [readOnly], tried: 0, phase: 2, placed: nil }
    // Order only (completeness does not depend on it): first whatever lets the blocked operation go next,
    // including an unknown-outcome write it may have observed, then earliest return first.
    const blocked = ops[opOf[blocking]!]!
    const rank = (e: number): number => {
      if (e === blocking) return 0
      const after = ops[opOf[e]!]!.step(state)
      return after !== impossible && blocked.step(after) !== impossible ? 1 : 2
    }
    const choices = calls
      .filter((e) => {
        const op = opOf[e]!
        if (ops[op]!.step(state) === impossible) return false
        return !unknownOutcome[op] || (rank(e) === 1 && isCanonical(op))
      })
      .map((e) => ({ e, rank: rank(e), returnMs: ops[opOf[e]!]!.returnMs }))
      .sort((a, b) => a.rank - b.rank || a.returnMs - b.returnMs)
      .map(({ e }) => e)
    return { configuration, blocking, choices, tried: 0, phase: 1, placed: nil }
  }

  /** Of identical unknown-outcome operations only the earliest unplaced one is a choice. */
  const isCanonical = (op: number): boolean => {
    const previous = previousIdentical[op]!
    return previous === nil || placedFlag[previous] === 1
  }

  /** Phase 2 choices: unknown-outcome candidates, canonical among identical ones, that some candidate needs. */
  const unknownChoices = (state: number): Array<number> => {
    const { calls } = candidates()
    const dependents = calls.filter((e) => !ops[opOf[e]!]!.stateIndependent)
    return calls.filter((e) => {
      const op = opOf[e]!
      if (!unknownOutcome[op]) return false
      if (!isCanonical(op)) return false
      const after = ops[op]!.step(state)
      return dependents.some((d) => {
        if (d === e) return false
        const step = ops[opOf[d]!]!.step
        const then = step(after)
        return then !== impossible && then !== step(state)
      })
    })
  }

  const root: Configuration = { state: absent, frontier: 0, holes: [], unknownPlaced: [], completedLeft: 0 }
  const stack: Array<SearchNode> = [enter({ ...root, completedLeft: unknownOutcome.filter((u) => !u).length })]
  if (stack[0]!.configuration.completedLeft === 0) return { _tag: "Linearizable" }
  for (;;) {
    const node = stack[stack.length - 1]!
    if (node.tried === node.choices.length && node.phase === 1) {
      node.phase = 2
      node.choices = node.choices.concat(unknownChoices(node.configuration.state))
    }
    if (node.tried < node.choices.length) {
      const call = node.choices[node.tried++]!
      const op = opOf[call]!
      const child = placeInto(node.configuration, op, ops[op]!.step(node.configuration.state))
      const key = `${child.state}:${child.frontier}:${child.holes.join(",")}:${child.unknownPlaced.join(",")}`
      if (explored.has(key)) continue // explored before, without success
      if (explored.size >= maxStates) return { _tag: "Bounded", statesExplored: explored.size, deepest }
      explored.add(key)
      if (child.completedLeft === 0) return { _tag: "Linearizable" }
      list.lift(call)
      placedFlag[op] = 1
      node.placed = call
      stack.push(enter(child))
      continue
    }
    // Every choice failed: the operation returning at `blocking` cannot be placed after this prefix.
    const depth = stack.length - 1
    if (deepest === undefined || depth > deepest.depth)
      deepest = { op: opOf[node.blocking]!, depth, state: node.configuration.state }
    stack.pop()
    const parent = stack[stack.length - 1]
    if (parent === undefined) return { _tag: "Stuck", statesExplored: explored.size, deepest }
    list.unlift(parent.placed)
    placedFlag[opOf[parent.placed]!] = 0
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
    const { op } = o.entry
    const input = JSON.stringify([op._tag, op._tag === "Cas" ? op.expected : null, "value" in op ? op.value : null])
    previous[id] = latest.get(input) ?? nil
    latest.set(input, id)
  })
  return previous
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
