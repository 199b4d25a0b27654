/**
 * @reef/devkit: what the tools around Reef share (the CLI, benchmarks, tests of several packages): how to start
 * a `reef` process as a child (its argv, its allocator, its ready line, stopping it) and a server a test or a
 * benchmark needs (redis-server, Azurite, a peer), below all of them so none of them imports another.
 */

export { inScope } from "./in-scope.js"
export { ephemeralRangeStart, freeListenPort, portFree } from "./listen-port.js"
export { type LocalCa, LocalCaError, writeLocalCa } from "./local-ca.js"
export {
  CLIENT_IDENTITY,
  type ClusterCredentials,
  ROLE_GRANTS,
  seedFile,
  writeClusterCredentials
} from "./nats-credentials.js"
export { findRedisServerBinary, REDIS_INSTALL_HINT, startRedisServer } from "./redis-server.js"
export {
  type ChildExit,
  type ChildOptions,
  ChildStartError,
  exitText,
  PARENT_FD,
  READY_PREFIX,
  startReefChild,
  stopTogetherOnClose,
  watchParent
} from "./reef-child.js"
export {
  allocatorEnv,
  JEMALLOC_CONF,
  JEMALLOC_PATHS,
  REEF_NODE_FLAGS,
  type ReefBuild,
  reefArgv,
  reefBuild,
  reefEntry,
  reefStatusEntry,
  repoRoot
} from "./reef-command.js"
export {
  findBinary,
  killOnExit,
  type ServerProcess,
  ServerProcessError,
  type ServerSpec,
  startServerProcess
} from "./server-process.js"
