/**
 * The role registry: every role `reef run <role>` can start, in the order `reef run --help` lists them and
 * `reef up` starts them. A new role adds its file next to these (see role.ts) and one entry here.
 */
import { airdbRole } from "./airdb.js"
import { backupRole } from "./backup.js"
import { chainRole } from "./chain.js"
import { coordinatorRole } from "./coordinator.js"
import { counterRole } from "./counter.js"
import { gatewayRole } from "./gateway.js"
import { replicaRole } from "./replica.js"
import type { RoleSpec } from "./role.js"
import { workerRole } from "./worker.js"

export const roles: ReadonlyArray<RoleSpec<any, any>> = [
  gatewayRole,
  counterRole,
  replicaRole,
  chainRole,
  backupRole,
  airdbRole,
  coordinatorRole,
  workerRole
]

export const findRole = (role: string): RoleSpec<any, any> | undefined => roles.find((r) => r.role === role)
