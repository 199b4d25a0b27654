/**
 * A cluster's NATS identities: one nkey user per role (the role's processes share it) plus `client` for
 * gateways' callers, the CLI and tests, each with the permissions its role needs (the kernel's grantFor), and
 * the nats-server configuration that admits exactly them. `reef up --secure` writes them into `.reef/nats/`,
 * and the integration tests make the same for their own servers.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import {
  authorizationConfig,
  type GrantSpec,
  grantFor,
  inboxPrefixOf,
  type NatsSecurity,
  newNkeyUser
} from "@reef/kernel"

/**
 * Who talks to whom on the bus (ARCHITECTURE.md). A role not listed here gets no identity: `reef run` of it
 * against a secured cluster needs `--creds` from whoever runs that cluster's server.
 */
export const ROLE_GRANTS: ReadonlyArray<GrantSpec> = [
  { name: "counter", roles: ["counter"], talksTo: ["counter"] },
  { name: "replica", roles: ["replica", "nic"], talksTo: ["replica"], popuc: true },
  { name: "coordinator", roles: ["coordinator"], talksTo: ["coordinator", "worker"] },
  { name: "worker", roles: ["worker"], talksTo: ["coordinator", "worker"] },
  { name: "chain", roles: ["chain"], talksTo: ["chain"], jetstream: "write", clusterSubjects: ["ira.>"] },
  { name: "backup", roles: ["backup"], talksTo: ["backup"], jetstream: "read" },
  { name: "airdb", roles: ["airdb", "slsmr"], talksTo: ["airdb", "slsmr"], jetstream: "write", subjects: ["airdb.>"] },
  // The gateway pings and relays to any actor; it runs no protocol.
  { name: "gateway", roles: ["gateway"], talksTo: ["*"], discovery: true },
  // `reef up` itself, the CLI, tests and benchmark clients: any actor, never a heartbeat or a round.
  { name: "client", roles: [], talksTo: ["*"], discovery: true }
]

export const CLIENT_IDENTITY = "client"

export interface ClusterCredentials {
  /** The directory holding one `<identity>.nk` seed file each (0600). */
  readonly dir: string
  /** nats-server configuration admitting exactly these identities. */
  readonly serverConfig: string
  /** The settings a process of `identity` connects with (`client` for a name without an identity). */
  readonly securityOf: (identity: string) => NatsSecurity
}

/** The seed file of `identity` in `dir`. */
export const seedFile = (dir: string, identity: string): string => join(dir, `${identity}.nk`)

/** New identities for every grant in `dir` (created 0700, seeds 0600), and the server configuration. */
export const writeClusterCredentials = (
  dir: string,
  cluster: string,
  grants: ReadonlyArray<GrantSpec> = ROLE_GRANTS
): ClusterCredentials => {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  chmodSync(dir, 0o700)
  const users = grants.map((spec) => {
    const user = newNkeyUser()
    writeFileSync(seedFile(dir, spec.name), `${user.seed}\n`, { mode: 0o600 })
    chmodSync(seedFile(dir, spec.name), 0o600)
    return { publicKey: user.publicKey, name: spec.name, grant: grantFor(cluster, spec, inboxPrefixOf(user.publicKey)) }
  })
  const names = new Set(grants.map((g) => g.name))
  return {
    dir,
    serverConfig: authorizationConfig(users),
    securityOf: (identity) => ({ nkeyFile: seedFile(dir, names.has(identity) ? identity : CLIENT_IDENTITY) })
  }
}
