/**
 * How a process proves who it is to NATS, and trusts the server: nats-server's own mechanisms, nothing of
 * Reef's. Identity is an nkey user (its seed signs the server's nonce at connect; nkeys.js), TLS is the
 * server's certificate checked against a CA, with a client certificate for mutual TLS. Every connection a
 * process makes (the kernel's, an engine thread's, a segment store's) takes its options from
 * `natsConnectOptions`, which reads the settings from the environment: `reef run --creds` and `reef up` set
 * them once per process, and worker threads inherit them.
 *
 *   REEF_NATS_NKEY      file holding the nkey user seed ("SU...", as `nk -gen user` writes it)
 *   REEF_NATS_TLS_CA    CA certificate (PEM) the server's certificate must chain to; TLS is on when set
 *   REEF_NATS_TLS_CERT  client certificate (PEM) for mutual TLS, with
 *   REEF_NATS_TLS_KEY   its private key (PEM)
 */
import { readFileSync } from "node:fs"
import type { ConnectionOptions } from "@nats-io/nats-core"
import { nkeyAuthenticator } from "@nats-io/nats-core"
import { createUser, fromSeed } from "@nats-io/nkeys"

export const NATS_NKEY_ENV = "REEF_NATS_NKEY"
export const NATS_TLS_CA_ENV = "REEF_NATS_TLS_CA"
export const NATS_TLS_CERT_ENV = "REEF_NATS_TLS_CERT"
export const NATS_TLS_KEY_ENV = "REEF_NATS_TLS_KEY"

export interface NatsTls {
  readonly caFile: string
  readonly certFile?: string | undefined
  readonly keyFile?: string | undefined
}

export interface NatsSecurity {
  /** File holding this process's nkey user seed; none: connect without credentials. */
  readonly nkeyFile?: string | undefined
  readonly tls?: NatsTls | undefined
}

/**
 * The security settings could not be used (a missing file, a seed that is not an nkey user seed). A plain
 * tagged Error, not a Data.TaggedError: the engine thread loads this module and nothing of Effect.
 */
export class NatsSecurityError extends Error {
  readonly _tag = "NatsSecurityError"
  constructor(readonly props: { readonly reason: string }) {
    super(`NATS credentials: ${props.reason}`)
  }
}

const nonEmpty = (v: string | undefined): string | undefined => (v === undefined || v === "" ? undefined : v)

/** The settings in `env` (the process's environment by default). */
export const natsSecurityFromEnv = (env: NodeJS.ProcessEnv = process.env): NatsSecurity => {
  const caFile = nonEmpty(env[NATS_TLS_CA_ENV])
  return {
    nkeyFile: nonEmpty(env[NATS_NKEY_ENV]),
    tls:
      caFile === undefined
        ? undefined
        : { caFile, certFile: nonEmpty(env[NATS_TLS_CERT_ENV]), keyFile: nonEmpty(env[NATS_TLS_KEY_ENV]) }
  }
}

/** The environment that hands `security` to a child process (the inverse of natsSecurityFromEnv). */
export const natsSecurityEnv = (security: NatsSecurity): Record<string, string> => ({
  ...(security.nkeyFile !== undefined && { [NATS_NKEY_ENV]: security.nkeyFile }),
  ...(security.tls !== undefined && { [NATS_TLS_CA_ENV]: security.tls.caFile }),
  ...(security.tls?.certFile !== undefined && { [NATS_TLS_CERT_ENV]: security.tls.certFile }),
  ...(security.tls?.keyFile !== undefined && { [NATS_TLS_KEY_ENV]: security.tls.keyFile })
})

const readText = (file: string, what: string): string => {
  try {
    return readFileSync(file, "utf8")
  } catch (cause) {
    throw new NatsSecurityError({ reason: `cannot read the ${what} ${file}: ${(cause as Error).message}` })
  }
}

/** The nkey user seed in `file` (the first line that looks like one, as nats tooling reads .nk files). */
export const readNkeySeed = (file: string): Uint8Array => {
  const seed = readText(file, "nkey seed file")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .find((line) => line.startsWith("SU"))
  if (seed === undefined) throw new NatsSecurityError({ reason: `${file} holds no nkey user seed (SU...)` })
  const bytes = new TextEncoder().encode(seed)
  try {
    fromSeed(bytes)
  } catch (cause) {
    throw new NatsSecurityError({ reason: `${file}: not a valid nkey seed (${(cause as Error).message})` })
  }
  return bytes
}

/** A new nkey user (nkeys.js, from the system's random source): its seed text and public key. */
export const newNkeyUser = (): { readonly seed: string; readonly publicKey: string } => {
  const user = createUser()
  return { seed: new TextDecoder().decode(user.getSeed()), publicKey: user.getPublicKey() }
}

/** The public key ("U...") of an nkey user seed: the name the server's config knows the user by. */
export const nkeyPublicKey = (seed: Uint8Array): string => fromSeed(seed).getPublicKey()

/**
 * Replies to a user's requests come to inboxes under this prefix, and its permissions let only that user
 * subscribe there: with the default `_INBOX.>` every user could read every other user's replies.
 */
export const inboxPrefixOf = (publicKey: string): string => `_INBOX_${publicKey}`

/**
 * `base` with the credentials and TLS of `security` (the environment's by default). Throws a
 * NatsSecurityError when a file is missing or a seed is invalid; the caller's connect reports it.
 */
export const natsConnectOptions = (
  base: ConnectionOptions,
  security: NatsSecurity = natsSecurityFromEnv()
): ConnectionOptions => {
  let options: ConnectionOptions = base
  if (security.nkeyFile !== undefined) {
    const seed = readNkeySeed(security.nkeyFile)
    options = { ...options, authenticator: nkeyAuthenticator(seed), inboxPrefix: inboxPrefixOf(nkeyPublicKey(seed)) }
  }
  if (security.tls !== undefined) {
    const { caFile, certFile, keyFile } = security.tls
    if ((certFile === undefined) !== (keyFile === undefined)) {
      throw new NatsSecurityError({ reason: "a client certificate needs its key, and a key its certificate" })
    }
    options = {
      ...options,
      tls: {
        ca: readText(caFile, "CA certificate"),
        ...(certFile !== undefined && { cert: readText(certFile, "client certificate") }),
        ...(keyFile !== undefined && { key: readText(keyFile, "client key") })
      }
    }
  }
  return options
}

/** The inbox prefix a connection was opened with (nats.js keeps its options on the connection). */
export const inboxPrefixOfConnection = (nc: unknown): string | undefined =>
  (nc as { readonly options?: { readonly inboxPrefix?: string } }).options?.inboxPrefix
