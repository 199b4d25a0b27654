/**
 * Linearizable reads ordered through consensus, batched: a read waits for a read barrier that was proposed
 * after the read arrived, and is answered from the state right after that barrier is applied. Every write
 * acknowledged before the read started was decided before the barrier, so the read sees it. One barrier
 * serves every read that arrived before it was proposed; reads that arrive while it is in flight wait for
 * the next one. Pure bookkeeping: the shell proposes barriers and answers reads.
 *
 * Each barrier has an id of its own, and only the application of the barrier in flight answers reads: a
 * barrier proposed earlier (one the shell gave up on, after a snapshot restore say) may still be decided
 * later, and it must not answer reads that arrived after it was proposed.
 */
export interface BarrierState<R> {
  /** Reads covered by the barrier in flight (proposed after they arrived). */
  readonly covered: ReadonlyArray<R>
  /** Reads that arrived after the barrier in flight was proposed. */
  readonly waiting: ReadonlyArray<R>
  /** Id of the barrier in flight, if one is. */
  readonly inFlight: number | undefined
  /** Id of the next barrier to propose. */
  readonly next: number
}

export const emptyBarrierState = <R>(): BarrierState<R> => ({
  covered: [],
  waiting: [],
  inFlight: undefined,
  next: 1
})

/** What the shell does next: propose barrier `propose` (an id), if set. */
export interface BarrierStep<R> {
  readonly state: BarrierState<R>
  readonly propose: number | undefined
}

const proposeNext = <R>(s: BarrierState<R>, covered: ReadonlyArray<R>): BarrierStep<R> => ({
  state: { covered, waiting: [], inFlight: s.next, next: s.next + 1 },
  propose: s.next
})

/** A read arrives: propose a barrier now if none is in flight, else wait for the next one. */
export const onRead = <R>(s: BarrierState<R>, read: R): BarrierStep<R> =>
  s.inFlight !== undefined
    ? { state: { ...s, waiting: [...s.waiting, read] }, propose: undefined }
    : proposeNext(s, [read])

/**
 * This replica's barrier `id` was applied: if it is the one in flight, answer the covered reads and propose
 * again if others wait. Any other barrier answers nothing.
 */
export const onBarrierApplied = <R>(
  s: BarrierState<R>,
  id: number
): BarrierStep<R> & { readonly answer: ReadonlyArray<R> } => {
  if (id !== s.inFlight) return { state: s, answer: [], propose: undefined }
  if (s.waiting.length > 0) return { ...proposeNext(s, s.waiting), answer: s.covered }
  return {
    state: { covered: [], waiting: [], inFlight: undefined, next: s.next },
    answer: s.covered,
    propose: undefined
  }
}

/** The barrier could not be proposed or is given up on: every read in it fails; barrier ids keep growing. */
export const onBarrierFailed = <R>(s: BarrierState<R>): { state: BarrierState<R>; fail: ReadonlyArray<R> } => ({
  state: { covered: [], waiting: [], inFlight: undefined, next: s.next },
  fail: [...s.covered, ...s.waiting]
})
