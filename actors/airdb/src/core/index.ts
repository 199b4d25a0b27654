/**
 * The pure S2MR cores of AirDB: no I/O, no clock, no randomness. The client shell (src/client) feeds them
 * log entries and state records and carries out what they decide.
 */
export * from "./blocks.js"
export * from "./chain.js"
export * from "./client-core.js"
export * from "./client-state.js"
export * from "./conflict.js"
export * from "./coordination.js"
export * from "./partial-state.js"
export * from "./replay.js"
export * from "./timely.js"
export * from "./types.js"
