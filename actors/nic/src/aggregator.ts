/**
 * The pipelined NIC's aggregator: K engines decide in parallel, each its own sequence of instances; every
 * replica merges them in the same deterministic order — instance 1 of engine 0, 1 of engine 1, ..., then
 * instance 2 of engine 0 — so all replicas apply one total order. Pure: decisions in, ordered batches out.
 */
export interface EngineDecision<V> {
  readonly engine: number
  readonly instance: number
  readonly values: ReadonlyArray<V>
}

export interface AggregatorState<V> {
  readonly engines: number
  /** Next (instance, engine) to emit. */
  readonly nextInstance: number
  readonly nextEngine: number
  /** Decisions that arrived early, keyed "engine/instance". */
  readonly waiting: ReadonlyMap<string, EngineDecision<V>>
}

export const createAggregator = <V>(engines: number, firstInstance = 1): AggregatorState<V> => {
  if (!Number.isInteger(engines) || engines < 1) throw new Error("aggregator: engines must be >= 1")
  return { engines, nextInstance: firstInstance, nextEngine: 0, waiting: new Map() }
}

const key = (engine: number, instance: number) => `${engine}/${instance}`

/** Adds one decision; returns every decision that is now next in the merged order. */
export const aggregate = <V>(
  state: AggregatorState<V>,
  decision: EngineDecision<V>
): { readonly state: AggregatorState<V>; readonly ordered: ReadonlyArray<EngineDecision<V>> } => {
  if (decision.engine < 0 || decision.engine >= state.engines)
    throw new Error(`aggregator: no engine ${decision.engine}`)
  if (
    decision.instance < state.nextInstance ||
    (decision.instance === state.nextInstance && decision.engine < state.nextEngine)
  ) {
    return { state, ordered: [] } // already emitted: a duplicate
  }
  const waiting = new Map(state.waiting).set(key(decision.engine, decision.instance), decision)
  const ordered: Array<EngineDecision<V>> = []
  let { nextInstance, nextEngine } = state
  for (;;) {
    const next = waiting.get(key(nextEngine, nextInstance))
    if (next === undefined) break
    waiting.delete(key(nextEngine, nextInstance))
    ordered.push(next)
    nextEngine++
    if (nextEngine === state.engines) {
      nextEngine = 0
      nextInstance++
    }
  }
  return { state: { ...state, nextInstance, nextEngine, waiting }, ordered }
}
