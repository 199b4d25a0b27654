/**
 * @reef/worker: a Remora worker (`reef run worker`): executes the stateless and stateful parts of transactions
 * on emulated virtual cores, holds leased objects and transfers them to peers on demand.
 */

export { type RunWorkerOptions, runWorker, type WorkerHandle } from "./run-worker.js"
export { VirtualCoreTimers } from "./virtual-cores.js"
export { workerActor } from "./worker-actor.js"
export { auditHash, defaultWorkerOptions, WorkerDriver, type WorkerIo, type WorkerOptions } from "./worker-driver.js"
