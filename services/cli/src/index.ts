/**
 * @reef/cli: the `reef` command line (src/main.ts). Exported for tests and tools that start Reef processes.
 */
export {
  type ChildOptions,
  ChildStartError,
  READY_PREFIX,
  startReefChild,
  stopTogetherOnClose
} from "./child-process.js"
export { clusterPlan, type PlannedActor, type PlanOptions, replicaIds } from "./cluster-plan.js"
export { findRole, type RoleLauncher, type RunOptions, roles } from "./roles.js"
export { allocatorEnv, reefArgv, repoRoot } from "./self-command.js"
export { membersTable } from "./status.js"
export { formatTable } from "./table.js"
export { kernelWorkload, percentile, type WorkloadRow } from "./workload.js"
