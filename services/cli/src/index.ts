/**
 * @reef/cli: the `reef` command line (src/main.ts): its command tree, role and data-plane registries, and the
 * cluster file. What tools share with it (starting `reef` processes) lives in @reef/devkit.
 */
export { type ParseResult, parseCommandLine } from "./cli/parse.js"
export { type ClusterFile, readClusterFile } from "./cluster-file.js"
export { reefCommand } from "./commands/index.js"
export { dataCommands } from "./data/index.js"
export { findRole, roles } from "./roles/index.js"
export type { PlannedActor, RoleSpec, RoleUp, Started } from "./roles/role.js"
export { formatTable } from "./table.js"
export { kernelWorkload, type WorkloadRow } from "./workload.js"
