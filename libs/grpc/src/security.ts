/**
 * gRPC's transport security and client authentication for every Reef server and client, from the
 * environment like the NATS settings (`reef up --tls` and `reef run` set them once per process):
 *
 *   REEF_GRPC_TLS_CA           CA certificate (PEM): clients verify servers with it; servers verify client certs
 *   REEF_GRPC_TLS_CERT/_KEY    this process's certificate and key: a server's, and a client's for mutual TLS
 *   REEF_GRPC_TLS_CLIENT_AUTH  "1": servers require a client certificate signed by the CA (mutual TLS)
 *   REEF_GRPC_TOKEN            a bearer token: clients send it, servers require it (`authorization` metadata)
 *
 * A call without the token is refused with UNAUTHENTICATED, one with another token with PERMISSION_DENIED;
 * health checks and reflection stay open, so probes and tools work without credentials. grpc-js sends call
 * credentials over TLS only, so a token needs TLS.
 */

import { timingSafeEqual } from "node:crypto"
import { readFileSync } from "node:fs"
import {
  type ChannelCredentials,
  credentials,
  Metadata,
  ServerCredentials,
  ServerInterceptingCall,
  type ServerInterceptor,
  status
} from "@grpc/grpc-js"

export const GRPC_TLS_CA_ENV = "REEF_GRPC_TLS_CA"
export const GRPC_TLS_CERT_ENV = "REEF_GRPC_TLS_CERT"
export const GRPC_TLS_KEY_ENV = "REEF_GRPC_TLS_KEY"
export const GRPC_TLS_CLIENT_AUTH_ENV = "REEF_GRPC_TLS_CLIENT_AUTH"
export const GRPC_TOKEN_ENV = "REEF_GRPC_TOKEN"

export interface GrpcSecurity {
  readonly tls?:
    | {
        readonly caFile: string
        readonly certFile?: string | undefined
        readonly keyFile?: string | undefined
        readonly requireClientCert?: boolean | undefined
      }
    | undefined
  readonly token?: string | undefined
}

const nonEmpty = (v: string | undefined): string | undefined => (v === undefined || v === "" ? undefined : v)

export const grpcSecurityFromEnv = (env: NodeJS.ProcessEnv = process.env): GrpcSecurity => {
  const caFile = nonEmpty(env[GRPC_TLS_CA_ENV])
  return {
    tls:
      caFile === undefined
        ? undefined
        : {
            caFile,
            certFile: nonEmpty(env[GRPC_TLS_CERT_ENV]),
            keyFile: nonEmpty(env[GRPC_TLS_KEY_ENV]),
            requireClientCert: env[GRPC_TLS_CLIENT_AUTH_ENV] === "1"
          },
    token: nonEmpty(env[GRPC_TOKEN_ENV])
  }
}

/** The environment that hands `security` to a child process. */
export const grpcSecurityEnv = (security: GrpcSecurity): Record<string, string> => ({
  ...(security.tls !== undefined && { [GRPC_TLS_CA_ENV]: security.tls.caFile }),
  ...(security.tls?.certFile !== undefined && { [GRPC_TLS_CERT_ENV]: security.tls.certFile }),
  ...(security.tls?.keyFile !== undefined && { [GRPC_TLS_KEY_ENV]: security.tls.keyFile }),
  ...(security.tls?.requireClientCert === true && { [GRPC_TLS_CLIENT_AUTH_ENV]: "1" }),
  ...(security.token !== undefined && { [GRPC_TOKEN_ENV]: security.token })
})

const read = (file: string): Buffer => readFileSync(file)

/** A server's credentials: TLS with its certificate when it has one, else plaintext. */
export const grpcServerCredentials = (security: GrpcSecurity = grpcSecurityFromEnv()): ServerCredentials => {
  const tls = security.tls
  if (tls?.certFile === undefined || tls.keyFile === undefined) return ServerCredentials.createInsecure()
  return ServerCredentials.createSsl(
    read(tls.caFile),
    [{ cert_chain: read(tls.certFile), private_key: read(tls.keyFile) }],
    tls.requireClientCert === true
  )
}

/** A client's credentials: TLS against the CA (with its certificate for mutual TLS) and the token, else plaintext. */
export const grpcClientCredentials = (security: GrpcSecurity = grpcSecurityFromEnv()): ChannelCredentials => {
  const tls = security.tls
  if (tls === undefined) return credentials.createInsecure()
  const channel =
    tls.certFile !== undefined && tls.keyFile !== undefined
      ? credentials.createSsl(read(tls.caFile), read(tls.keyFile), read(tls.certFile))
      : credentials.createSsl(read(tls.caFile))
  const token = security.token
  if (token === undefined) return channel
  return credentials.combineChannelCredentials(
    channel,
    credentials.createFromMetadataGenerator((_params, callback) => {
      const metadata = new Metadata()
      metadata.set("authorization", `Bearer ${token}`)
      callback(null, metadata)
    })
  )
}

/** Services every caller may use: health checks and reflection (probes and tools need no credentials). */
const OPEN_SERVICES = [
  "/grpc.health.v1.Health/",
  "/grpc.reflection.v1.ServerReflection/",
  "/grpc.reflection.v1alpha.ServerReflection/"
]

const sameSecret = (a: string, b: string): boolean => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/**
 * Refuses every call but health and reflection without `Bearer <token>` in its `authorization` metadata:
 * UNAUTHENTICATED when there is none, PERMISSION_DENIED for another token.
 */
export const bearerTokenInterceptor =
  (token: string): ServerInterceptor =>
  (method, call) => {
    const open = OPEN_SERVICES.some((prefix) => method.path.startsWith(prefix))
    const intercepting: ServerInterceptingCall = new ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, nextMetadata) => {
            if (open) return nextMetadata(metadata)
            const given = metadata.get("authorization")[0]
            if (typeof given !== "string" || !given.startsWith("Bearer ")) {
              return intercepting.sendStatus({
                code: status.UNAUTHENTICATED,
                details: `${method.path} needs a bearer token (authorization: Bearer <token>)`
              })
            }
            if (!sameSecret(given.slice("Bearer ".length), token)) {
              return intercepting.sendStatus({
                code: status.PERMISSION_DENIED,
                details: `${method.path}: token refused`
              })
            }
            nextMetadata(metadata)
          }
        })
    })
    return intercepting
  }

/** The interceptors a server of `security` runs. */
export const securityInterceptors = (security: GrpcSecurity = grpcSecurityFromEnv()): Array<ServerInterceptor> =>
  security.token === undefined ? [] : [bearerTokenInterceptor(security.token)]
