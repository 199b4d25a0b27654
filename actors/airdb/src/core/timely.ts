/**
 * The timely-snapshot policy (§3.3, Definition 1): "n − i_k ≤ (1+ε)B ... If n − i_k ≥ B, the library
 * initiates snapshot creation immediately; once n − i_k exceeds (1 + ε)B, it stops accepting new commands
 * until enough have been materialized." n is the command log's length, i_k the end of the snapshot chain.
 */

export interface TimelyPolicy {
  /** B: non-materialised entries at which a snapshot is started. */
  readonly snapshotEvery: number
  /** ε: the soft margin above B before new commands wait. */
  readonly epsilon: number
}

/** (1+ε)B rounded down: the most non-materialised entries the log may ever hold. */
export const maxPendingEntries = (p: TimelyPolicy): number => Math.floor((1 + p.epsilon) * p.snapshotEvery)

/** n − i_k ≥ B: start a snapshot now. */
export const needsSnapshot = (n: number, chainEnd: number, p: TimelyPolicy): boolean => n - chainEnd >= p.snapshotEvery

/** Whether one more entry may be appended at position n: afterwards n + 1 − i_k ≤ (1+ε)B still holds. */
export const admitsEntry = (n: number, chainEnd: number, p: TimelyPolicy): boolean =>
  n + 1 - chainEnd <= maxPendingEntries(p)

export const validatePolicy = (p: TimelyPolicy): void => {
  if (!Number.isSafeInteger(p.snapshotEvery) || p.snapshotEvery < 1) {
    throw new Error(`B (snapshotEvery) must be an integer >= 1, got ${p.snapshotEvery}`)
  }
  if (!(p.epsilon >= 0) || maxPendingEntries(p) < p.snapshotEvery) {
    throw new Error(`epsilon must be >= 0, got ${p.epsilon}`)
  }
}
