/**
 * The one place the CLI turns a cluster's security settings into each process's options.
 *
 * `reef up --secure` makes, beside its cluster file: an nkey identity per role (`.reef/nats/<identity>.nk`),
 * a local CA and the processes' certificate (`.reef/tls/`), and a bearer token for gRPC (`.reef/tls/grpc-token`),
 * keys and secrets 0600, all removed when the cluster stops. Its nats-server admits only those identities over
 * mutual TLS; its gRPC servers serve TLS and require the token. `reef up --tls` does the TLS part alone.
 *
 * Every process gets its settings as environment variables (@reef/kernel nats-security.ts, @reef/grpc
 * security.ts), which every NATS connection and gRPC server or client of the process reads, engine threads
 * included: `reef up` passes them to its children, and `reef run` and the data-plane commands started in
 * another terminal take them from the cluster file (`reef run <role> --creds FILE` names an identity).
 */
import { randomBytes } from "node:crypto"
import { readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import {
  CLIENT_IDENTITY,
  type ClusterCredentials,
  type LocalCa,
  ROLE_GRANTS,
  seedFile,
  writeClusterCredentials,
  writeLocalCa
} from "@reef/devkit"
import { grpcSecurityEnv } from "@reef/grpc/security"
import { type NatsSecurity, natsSecurityEnv } from "@reef/kernel"
import type { ClusterFile } from "./cluster-file.js"

/** What the cluster file records of a secured cluster (paths only: the secrets stay in their 0600 files). */
export interface ClusterSecurityFile {
  /** Directory of the nkey seeds (`<identity>.nk`), and the identities there. */
  readonly credentials?: string
  readonly identities?: ReadonlyArray<string>
  /** The CA, and the processes' certificate and key. */
  readonly tls?: { readonly ca: string; readonly cert: string; readonly key: string }
  /** File holding the gRPC bearer token. */
  readonly grpcToken?: string
}

export interface ClusterSecurity {
  readonly file: ClusterSecurityFile
  readonly credentials: ClusterCredentials | undefined
  readonly ca: LocalCa | undefined
  /** The nats-server options that match. */
  readonly natsServer: {
    readonly config?: string
    readonly tls?: { certFile: string; keyFile: string; caFile: string; verify: boolean }
  }
  /** The environment of a process of `role` (`client` for `reef up` itself and the CLI). */
  readonly envOf: (role: string) => Record<string, string>
  /** Removes every secret made. */
  readonly remove: () => void
}

/** Makes what `reef up` needs for `secure` (auth, TLS, token) or `tls` alone, beside `clusterFilePath`. */
export const makeClusterSecurity = (
  clusterFilePath: string,
  cluster: string,
  options: { readonly secure: boolean; readonly tls: boolean }
): ClusterSecurity => {
  const dir = join(clusterFilePath, "..")
  const credentials = options.secure ? writeClusterCredentials(join(dir, "nats"), cluster) : undefined
  const ca = options.secure || options.tls ? writeLocalCa(join(dir, "tls")) : undefined
  let grpcToken: string | undefined
  if (options.secure && ca !== undefined) {
    grpcToken = join(ca.dir, "grpc-token")
    writeFileSync(grpcToken, `${randomBytes(32).toString("base64url")}\n`, { mode: 0o600 })
  }
  const file: ClusterSecurityFile = {
    ...(credentials !== undefined && { credentials: credentials.dir, identities: ROLE_GRANTS.map((g) => g.name) }),
    ...(ca !== undefined && { tls: { ca: ca.caFile, cert: ca.certFile, key: ca.keyFile } }),
    ...(grpcToken !== undefined && { grpcToken })
  }
  return {
    file,
    credentials,
    ca,
    natsServer: {
      ...(credentials !== undefined && { config: credentials.serverConfig }),
      ...(ca !== undefined && {
        tls: { certFile: ca.certFile, keyFile: ca.keyFile, caFile: ca.caFile, verify: true }
      })
    },
    envOf: (role) => processEnv(file, natsIdentity(file, role)),
    remove: () => {
      for (const d of [credentials?.dir, ca?.dir]) if (d !== undefined) rmSync(d, { recursive: true, force: true })
    }
  }
}

/** The seed file of `role`'s identity, or the client one's for a role without its own. */
const natsIdentity = (file: ClusterSecurityFile, role: string): string | undefined =>
  file.credentials === undefined
    ? undefined
    : seedFile(file.credentials, (file.identities ?? []).includes(role) ? role : CLIENT_IDENTITY)

/** The environment of a process with the NATS identity in `nkeyFile` in a cluster secured as `file` says. */
const processEnv = (file: ClusterSecurityFile, nkeyFile: string | undefined): Record<string, string> => {
  const tls = file.tls
  const nats: NatsSecurity = {
    ...(nkeyFile !== undefined && { nkeyFile }),
    ...(tls !== undefined && { tls: { caFile: tls.ca, certFile: tls.cert, keyFile: tls.key } })
  }
  const token = file.grpcToken === undefined ? undefined : readFileSync(file.grpcToken, "utf8").trim()
  return {
    ...natsSecurityEnv(nats),
    ...grpcSecurityEnv({
      ...(tls !== undefined && { tls: { caFile: tls.ca, certFile: tls.cert, keyFile: tls.key } }),
      ...(token !== undefined && { token })
    })
  }
}

/**
 * Makes the security of a cluster this process's (a `reef run`, a data-plane command): `--creds` names its
 * NATS identity, else its role's from the cluster file. Every connection the process opens reads it.
 */
export const adoptClusterSecurity = (role: string, creds: string | undefined, file: ClusterFile | undefined): void => {
  const security: ClusterSecurityFile = file?.security ?? {}
  const env = processEnv(security, creds ?? natsIdentity(security, role))
  Object.assign(process.env, env)
}
