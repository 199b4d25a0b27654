/**
 * @reef/airdb/testing: fixtures for tests and benchmarks (Azurite; freezing a server process) and the
 * Elle-style list-append checker the simulator and the real-process nemesis share.
 */

export { type Anomaly, type CheckResult, checkListAppend, type MicroOp, type Model, type Txn } from "../sim/elle.js"
export { startAzurite } from "./azurite.js"
export { signalProcess } from "./signal.js"
