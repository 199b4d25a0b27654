/** @reef/airdb/testing: fixtures for tests and benchmarks (Azurite; freezing a server process). */
export { startAzurite } from "./azurite.js"
export { signalProcess } from "./signal.js"
