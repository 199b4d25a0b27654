/**
 * The one place the CLI turns a cluster's security settings into each process's NATS options. `reef up
 * --secure` writes the cluster's identities next to its cluster file (`.reef/nats/<identity>.nk`, 0600) and
 * runs its nats-server with the matching configuration; every process it starts gets its role's identity
 * in the environment (REEF_NATS_NKEY, nats-security.ts in @reef/kernel), which every NATS connection of the
 * process reads, engine threads included. `reef run <role>` takes `--creds FILE`, else its role's seed from
 * the cluster file's credentials directory.
 */
import { join } from "node:path"
import { CLIENT_IDENTITY, seedFile } from "@reef/devkit"
import { type NatsSecurity, natsSecurityEnv } from "@reef/kernel"
import type { ClusterFile } from "./cluster-file.js"

/** Where `reef up --secure` keeps the cluster's NATS identities: beside the cluster file. */
export const credentialsDir = (clusterFilePath: string): string => join(clusterFilePath, "..", "nats")

/**
 * The NATS security of a `reef run` of `role`: `--creds`, else the role's identity in the cluster file's
 * credentials directory (the `client` one for a role without its own), else none.
 */
export const runSecurity = (role: string, creds: string | undefined, file: ClusterFile | undefined): NatsSecurity => {
  if (creds !== undefined) return { nkeyFile: creds }
  const dir = file?.nats.credentials
  if (dir === undefined) return {}
  const identities = file?.nats.identities ?? []
  return { nkeyFile: seedFile(dir, identities.includes(role) ? role : CLIENT_IDENTITY) }
}

/**
 * Makes `security` this process's for every NATS connection it opens (the kernel's, an engine thread's, a
 * segment store's): they read the environment.
 */
export const adoptSecurity = (security: NatsSecurity): void => {
  Object.assign(process.env, natsSecurityEnv(security))
}
