/**
 * Linearizable reads ordered through consensus, batched: a read waits for a read barrier that was proposed
 * after the read arrived, and is answered from the state right after that barrier is applied. Every write
 * acknowledged before the read started was decided before the barrier, so the read sees it. One barrier
 * serves every read that arrived before it was proposed; reads that arrive while it is in flight wait for
 * the next one. Pure bookkeeping: the shell proposes barriers and answers reads.
 */
export interface BarrierState<R> {
  /** Reads covered by the barrier in flight (proposed after they arrived). */
  readonly covered: ReadonlyArray<R>
  /** Reads that arrived after the barrier in flight was proposed. */
  readonly waiting: ReadonlyArray<R>
  readonly inFlight: boolean
}

export const emptyBarrierState = <R>(): BarrierState<R> => ({ covered: [], waiting: [], inFlight: false })

/** A read arrives: propose a barrier now if none is in flight, else wait for the next one. */
export const onRead = <R>(s: BarrierState<R>, read: R): { state: BarrierState<R>; propose: boolean } =>
  s.inFlight
    ? { state: { ...s, waiting: [...s.waiting, read] }, propose: false }
    : { state: { covered: [read], waiting: [], inFlight: true }, propose: true }

/** This replica's barrier was applied: answer the covered reads; propose again if others wait. */
export const onBarrierApplied = <R>(
  s: BarrierState<R>
): { state: BarrierState<R>; answer: ReadonlyArray<R>; propose: boolean } =>
  s.waiting.length > 0
    ? { state: { covered: s.waiting, waiting: [], inFlight: true }, answer: s.covered, propose: true }
    : { state: emptyBarrierState(), answer: s.covered, propose: false }

/** The barrier could not be proposed (engine down): every read in it fails; waiting ones get a new chance. */
export const onBarrierFailed = <R>(s: BarrierState<R>): { state: BarrierState<R>; fail: ReadonlyArray<R> } => ({
  state: emptyBarrierState(),
  fail: [...s.covered, ...s.waiting]
})
