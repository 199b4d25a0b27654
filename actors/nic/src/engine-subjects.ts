/** Subjects of a POPUC replication group (see ARCHITECTURE.md): one inbox per engine, plus bootstrap ones. */
export const engineSubject = (cluster: string, group: string, engine: string): string =>
  `reef.${cluster}.popuc.${group}.${engine}`

/** Every engine of a group listens here too: a round message for all peers is one publish (no echo to self). */
export const engineGroupSubject = (cluster: string, group: string): string => `reef.${cluster}.popuc-all.${group}`

/** Answered by every engine from its start: round-trip probes for calibrating the round timer. */
export const probeSubject = (cluster: string, group: string, engine: string): string =>
  `reef.${cluster}.popuc-probe.${group}.${engine}`

/** Where the engines of a group announce their calibrated ΔI, to agree on the maximum. */
export const calibrationSubject = (cluster: string, group: string): string =>
  `reef.${cluster}.popuc-calibration.${group}`

/**
 * Every engine subscribes here and ignores what comes: a peer publishes to it with a reply subject to learn,
 * from the server's "no responders" answer, that no connection of this engine is left (engine-worker.ts).
 */
export const livenessSubject = (cluster: string, group: string, engine: string): string =>
  `reef.${cluster}.popuc-live.${group}.${engine}`
