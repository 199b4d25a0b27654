/**
 * A transactional history checker in the style of Jepsen's Elle, for the list-append workload: keys hold
 * lists, a transaction appends unique values to lists and reads whole lists. Because appends are unique and
 * reads return whole lists, every read reveals a prefix of its key's version order, so the dependencies
 * between transactions can be inferred from the history alone (Adya's generalized isolation levels):
 *
 *   ww  T1 appended the element just before T2's element in a key's version order
 *   wr  T2 read a list whose last element T1 appended
 *   rw  T1 read a list, and T2 appended the element that comes next (an anti-dependency)
 *   rt  T1 completed before T2 began (real time: what strict serializability adds)
 *
 * Anomalies, by the cycles they make: G0 (ww only), G1c (ww + wr), G-single (exactly one rw), G2 (one or
 * more rw). Without cycles: G1a (a read of an aborted append), G1b (a read of a transaction's intermediate
 * state), garbage reads, duplicated elements and incompatible version orders. Strict serializability
 * forbids all of them, with real-time edges; snapshot isolation forbids all but G2 with more than one rw edge
 * (write skew).
 */

export type MicroOp =
  | { readonly f: "append"; readonly key: string; readonly value: number }
  | { readonly f: "read"; readonly key: string; readonly value: ReadonlyArray<number> | undefined }

export interface Txn {
  readonly id: number
  readonly process: string
  /** ok: committed; fail: certainly not committed; info: unknown (a crash or a timeout). */
  readonly type: "ok" | "fail" | "info"
  readonly ops: ReadonlyArray<MicroOp>
  /** Real time of the invocation and of the completion (completion: Infinity for info). */
  readonly invokedAt: number
  readonly completedAt: number
}

export type Model = "strict-serializable" | "snapshot-isolation"

export type EdgeKind = "ww" | "wr" | "rw" | "rt"

export interface Anomaly {
  readonly type: string
  readonly explanation: string
  /** The transactions of the cycle, with the edge from each to the next. */
  readonly cycle?: ReadonlyArray<{ readonly txn: number; readonly edge: EdgeKind }>
}

export interface CheckResult {
  readonly valid: boolean
  readonly anomalies: ReadonlyArray<Anomaly>
  readonly stats: { readonly txns: number; readonly edges: number; readonly keys: number }
}

type Graph = Map<number, Map<number, Set<EdgeKind>>>

/** The value at `key`, made by `make` when absent. */
const getOrAdd = <K, V>(m: Map<K, V>, key: K, make: () => V): V => {
  const v = m.get(key)
  if (v !== undefined) return v
  const fresh = make()
  m.set(key, fresh)
  return fresh
}

const addEdge = (g: Graph, from: number, to: number, kind: EdgeKind) => {
  if (from === to) return
  getOrAdd(
    getOrAdd(g, from, () => new Map<number, Set<EdgeKind>>()),
    to,
    () => new Set<EdgeKind>()
  ).add(kind)
}

/** Tarjan's strongly connected components over edges of the allowed kinds. */
const components = (g: Graph, nodes: ReadonlyArray<number>, allowed: ReadonlySet<EdgeKind>): Array<Array<number>> => {
  const index = new Map<number, number>()
  const low = new Map<number, number>()
  const onStack = new Set<number>()
  const stack: Array<number> = []
  const out: Array<Array<number>> = []
  let counter = 0
  const succ = (v: number) =>
    [...(g.get(v) ?? new Map<number, Set<EdgeKind>>())]
      .filter(([, k]) => [...k].some((x) => allowed.has(x)))
      .map(([w]) => w)
  for (const root of nodes) {
    if (index.has(root)) continue
    // Iterative DFS: histories can be long enough to overflow the call stack.
    const work: Array<{ v: number; next: Array<number>; i: number }> = []
    const visit = (v: number) => {
      index.set(v, counter)
      low.set(v, counter++)
      stack.push(v)
      onStack.add(v)
      work.push({ v, next: succ(v), i: 0 })
    }
    visit(root)
    while (work.length > 0) {
      const top = work.at(-1)!
      if (top.i < top.next.length) {
        const w = top.next[top.i++]!
        if (!index.has(w)) visit(w)
        else if (onStack.has(w)) low.set(top.v, Math.min(low.get(top.v)!, index.get(w)!))
        continue
      }
      work.pop()
      if (work.length > 0) {
        const parent = work.at(-1)!.v
        low.set(parent, Math.min(low.get(parent)!, low.get(top.v)!))
      }
      if (low.get(top.v) === index.get(top.v)) {
        const scc: Array<number> = []
        for (;;) {
          const w = stack.pop()!
          onStack.delete(w)
          scc.push(w)
          if (w === top.v) break
        }
        if (scc.length > 1) out.push(scc)
      }
    }
  }
  return out
}

/** A shortest path from `from` to `to` over allowed edges inside `within`, as [node, edge-to-next] pairs. */
const path = (
  g: Graph,
  from: number,
  to: number,
  allowed: ReadonlySet<EdgeKind>,
  within: ReadonlySet<number>
): Array<{ txn: number; edge: EdgeKind }> | undefined => {
  const prev = new Map<number, { node: number; edge: EdgeKind }>()
  const queue = [from]
  const seen = new Set([from])
  while (queue.length > 0) {
    const v = queue.shift()!
    for (const [w, kinds] of g.get(v) ?? []) {
      const kind = [...kinds].find((k) => allowed.has(k))
      if (kind === undefined || !within.has(w) || seen.has(w)) continue
      prev.set(w, { node: v, edge: kind })
      if (w === to) {
        const steps: Array<{ txn: number; edge: EdgeKind }> = []
        for (let at = to; at !== from; ) {
          const p = prev.get(at)!
          steps.unshift({ txn: p.node, edge: p.edge })
          at = p.node
        }
        return steps
      }
      seen.add(w)
      queue.push(w)
    }
  }
  return undefined
}

const describeCycle = (cycle: ReadonlyArray<{ txn: number; edge: EdgeKind }>) =>
  `${cycle.map((s) => `T${s.txn} -${s.edge}->`).join(" ")} T${cycle[0]!.txn}`

/** Checks a list-append history against a consistency model. */
export const checkListAppend = (history: ReadonlyArray<Txn>, model: Model): CheckResult => {
  const anomalies: Array<Anomaly> = []
  const byId = new Map(history.map((t) => [t.id, t]))
  const committed = history.filter((t) => t.type === "ok")
  // Who appended each value (values are unique per key), and where in its transaction.
  const appender = new Map<string, Map<number, { txn: Txn; last: boolean }>>()
  for (const t of history) {
    const lastAppend = new Map<string, number>()
    for (const op of t.ops) if (op.f === "append") lastAppend.set(op.key, op.value)
    for (const op of t.ops) {
      if (op.f !== "append") continue
      const m = getOrAdd(appender, op.key, () => new Map<number, { txn: Txn; last: boolean }>())
      if (m.has(op.value)) {
        anomalies.push({ type: "duplicate-append", explanation: `value ${op.value} appended twice to ${op.key}` })
      }
      m.set(op.value, { txn: t, last: lastAppend.get(op.key) === op.value })
    }
  }

  // Version order per key: the longest list read; every other read must be a prefix of it.
  const order = new Map<string, ReadonlyArray<number>>()
  for (const t of committed) {
    for (const op of t.ops) {
      if (op.f !== "read" || op.value === undefined) continue
      const seen = new Set<number>()
      for (const v of op.value) {
        if (seen.has(v)) {
          anomalies.push({
            type: "duplicate-elements",
            explanation: `T${t.id} read ${op.key} = [${op.value}] with ${v} twice`
          })
        }
        seen.add(v)
      }
      const known = order.get(op.key) ?? []
      const [shorter, longer] = op.value.length <= known.length ? [op.value, known] : [known, op.value]
      if (!shorter.every((v, i) => longer[i] === v)) {
        anomalies.push({
          type: "incompatible-order",
          explanation: `T${t.id} read ${op.key} = [${op.value}], which is no prefix of (nor extends) [${known}]`
        })
      } else order.set(op.key, longer)
    }
  }

  const g: Graph = new Map()
  for (const t of committed) {
    // Reads of a transaction's own appends are internal; only reads of others' state make dependencies.
    const ownAppends = new Map<string, Set<number>>()
    for (const op of t.ops) {
      if (op.f === "append") {
        getOrAdd(ownAppends, op.key, () => new Set<number>()).add(op.value)
        continue
      }
      if (op.value === undefined) continue
      const external = op.value.filter((v) => !ownAppends.get(op.key)?.has(v))
      const versions = order.get(op.key) ?? []
      for (const v of external) {
        const a = appender.get(op.key)?.get(v)
        if (a === undefined) {
          anomalies.push({
            type: "garbage-read",
            explanation: `T${t.id} read ${v} in ${op.key}, which nobody appended`
          })
        } else if (a.txn.type === "fail") {
          anomalies.push({
            type: "G1a",
            explanation: `T${t.id} read ${v} in ${op.key}, appended by T${a.txn.id}, which aborted`
          })
        }
      }
      const last = external.at(-1)
      if (last !== undefined) {
        const a = appender.get(op.key)?.get(last)
        if (a !== undefined && a.txn.id !== t.id) {
          if (!a.last) {
            anomalies.push({
              type: "G1b",
              explanation: `T${t.id} read ${op.key} ending in ${last}, an intermediate append of T${a.txn.id}`
            })
          }
          addEdge(g, a.txn.id, t.id, "wr")
        }
      }
      // The element after what this read saw: its appender overwrote what this transaction read.
      const next = versions[external.length]
      const after = next === undefined ? undefined : appender.get(op.key)?.get(next)
      if (after !== undefined && after.txn.id !== t.id) addEdge(g, t.id, after.txn.id, "rw")
    }
  }
  for (const [key, versions] of order) {
    for (let i = 0; i + 1 < versions.length; i++) {
      const a = appender.get(key)?.get(versions[i]!)
      const b = appender.get(key)?.get(versions[i + 1]!)
      if (a !== undefined && b !== undefined) addEdge(g, a.txn.id, b.txn.id, "ww")
    }
  }
  // Every transaction in the graph must have committed: a dependency on an aborted one was reported above.
  const nodes = [...new Set([...committed.map((t) => t.id), ...g.keys()])].filter((id) => byId.get(id)?.type !== "fail")
  if (model === "strict-serializable") {
    // Real-time order, transitively reduced enough to stay small: each transaction gets an edge from those
    // that completed before it began and after the latest invocation among them.
    const sorted = nodes.map((id) => byId.get(id)!).sort((a, b) => a.invokedAt - b.invokedAt)
    const byCompletion = [...sorted].sort((a, b) => a.completedAt - b.completedAt)
    for (const t2 of sorted) {
      const before = byCompletion.filter((t1) => t1.completedAt < t2.invokedAt)
      const frontier = Math.max(...before.map((t1) => t1.invokedAt), Number.NEGATIVE_INFINITY)
      for (const t1 of before) if (t1.completedAt >= frontier) addEdge(g, t1.id, t2.id, "rt")
    }
  }

  const edgeCount = [...g.values()].reduce((n, m) => n + m.size, 0)
  const rt = model === "strict-serializable"
  const kinds = (...k: Array<EdgeKind>) => new Set<EdgeKind>(rt ? [...k, "rt"] : k)
  const suffix = (cycle: ReadonlyArray<{ edge: EdgeKind }>) => (cycle.some((s) => s.edge === "rt") ? "-realtime" : "")
  const found = new Set<string>()
  const report = (type: string, cycle: Array<{ txn: number; edge: EdgeKind }>) => {
    const key = [...cycle.map((s) => s.txn)].sort((a, b) => a - b).join(",")
    if (found.has(key)) return
    found.add(key)
    anomalies.push({ type, explanation: describeCycle(cycle), cycle })
  }
  const cyclesOver = (
    allowed: ReadonlySet<EdgeKind>,
    name: (cycle: Array<{ txn: number; edge: EdgeKind }>) => string
  ) => {
    for (const scc of components(g, nodes, allowed)) {
      const within = new Set(scc)
      const start = scc[0]!
      for (const [w, k] of g.get(start) ?? []) {
        const edge = [...k].find((x) => allowed.has(x))
        if (edge === undefined || !within.has(w)) continue
        const back = path(g, w, start, allowed, within)
        if (back !== undefined) {
          const cycle = [{ txn: start, edge }, ...back]
          report(name(cycle), cycle)
          break
        }
      }
    }
  }
  cyclesOver(kinds("ww"), (c) => `G0${suffix(c)}`)
  cyclesOver(kinds("ww", "wr"), (c) => `G1c${suffix(c)}`)
  // G-single: an rw edge T1 -> T2 closed by a path back from T2 to T1 without anti-dependencies.
  const noRw = kinds("ww", "wr")
  for (const [from, out] of g) {
    for (const [to, k] of out) {
      if (!k.has("rw")) continue
      const back = path(g, to, from, noRw, new Set(nodes))
      if (back !== undefined) report(`G-single${suffix(back)}`, [{ txn: from, edge: "rw" }, ...back])
    }
  }
  if (model === "strict-serializable") cyclesOver(kinds("ww", "wr", "rw"), (c) => `G2${suffix(c)}`)

  return {
    valid: anomalies.length === 0,
    anomalies,
    stats: { txns: history.length, edges: edgeCount, keys: order.size }
  }
}
