/**
 * @reef/devkit: what the tools around Reef share (the CLI, benchmarks, cross-package tests): how to start a
 * `reef` process as a child (its argv, its allocator, its ready line, stopping it), below all of them so none
 * of them imports another.
 */
export {
  type ChildOptions,
  ChildStartError,
  READY_PREFIX,
  startReefChild,
  stopTogetherOnClose
} from "./reef-child.js"
export { allocatorEnv, JEMALLOC_CONF, JEMALLOC_PATHS, REEF_NODE_FLAGS, reefArgv, repoRoot } from "./reef-command.js"
