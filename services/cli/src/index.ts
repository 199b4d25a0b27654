/**
 * @reef/cli: the `reef` command line (src/main.ts). What tools share with it (starting `reef` processes)
 * lives in @reef/devkit.
 */
export { clusterPlan, type PlannedActor, type PlanOptions, replicaIds } from "./cluster-plan.js"
export { findRole, type RoleLauncher, type RunOptions, roles } from "./roles.js"
export { membersTable } from "./status.js"
export { formatTable } from "./table.js"
export { kernelWorkload, type WorkloadRow } from "./workload.js"
