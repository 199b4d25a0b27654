/**
 * Transport security and client authentication end to end, with a local CA made by openssl (@reef/devkit):
 * NATS over mutual TLS with nkey identities (a client without TLS, without a client certificate or without
 * credentials is refused; the kernel works through it), and gRPC over TLS with a bearer token (no token:
 * UNAUTHENTICATED, another token: PERMISSION_DENIED, health open) and mutual TLS.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type ChannelCredentials, Client, credentials, Metadata, status } from "@grpc/grpc-js"
import { connect } from "@nats-io/transport-node"
import { writeClusterCredentials, writeLocalCa } from "@reef/devkit"
import { type GrpcSecurity, grpcClientCredentials, grpcService, serveGrpc } from "@reef/grpc"
import {
  CounterAddRpc,
  CounterGetRpc,
  counterActor,
  Messenger,
  type NatsSecurity,
  natsConnectOptions,
  natsKernelLayer,
  spawn,
  startNatsServer
} from "@reef/kernel"
import { ClusterClient, ClusterService } from "@reef/proto"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { describe, expect, it } from "vitest"

const tempDir = (name: string) => mkdtempSync(join(tmpdir(), `reef-${name}-`))
const cluster = "sec"

describe("NATS over mutual TLS with nkey identities", () => {
  it(
    "admits TLS clients with a certificate and credentials; refuses the others",
    () =>
      Effect.gen(function* () {
        const ca = writeLocalCa(tempDir("ca"))
        const creds = writeClusterCredentials(tempDir("nats"), cluster)
        const server = yield* startNatsServer({
          jetstream: false,
          config: creds.serverConfig,
          tls: { certFile: ca.certFile, keyFile: ca.keyFile, caFile: ca.caFile, verify: true }
        })
        const tls = { caFile: ca.caFile, certFile: ca.certFile, keyFile: ca.keyFile }
        const attempt = (security: NatsSecurity) =>
          Effect.promise(() =>
            connect(natsConnectOptions({ servers: server.url, reconnect: false }, security)).then(
              async (nc) => {
                await nc.close()
                return "connected"
              },
              (e: Error) => `refused: ${e.message}`
            )
          )
        expect(yield* attempt(creds.securityOf("client"))).toMatch(/refused/)
        expect(yield* attempt({ ...creds.securityOf("client"), tls: { caFile: ca.caFile } })).toMatch(/refused/)
        expect(yield* attempt({ tls })).toMatch(/refused/)
        expect(yield* attempt({ ...creds.securityOf("client"), tls })).toBe("connected")

        // The kernel through it: an actor process and a client, each with its own identity.
        const layer = (identity: string) =>
          natsKernelLayer(
            { servers: server.url, name: identity, security: { ...creds.securityOf(identity), tls } },
            { cluster }
          )
        const actor = yield* Layer.build(layer("counter"))
        yield* spawn(counterActor, "c1").pipe(Effect.provide(actor))
        const client = yield* Layer.build(layer("client"))
        const counter = { cluster, role: "counter", id: "c1" }
        const value = yield* Effect.gen(function* () {
          const m = yield* Messenger
          yield* m.ask(counter, CounterAddRpc, { key: "k", amount: 2 })
          return yield* m.ask(counter, CounterGetRpc, { key: "k" })
        }).pipe(Effect.provide(client))
        expect(value.value).toBe(2)
      }).pipe(Effect.scoped, Effect.runPromise),
    120_000
  )
})

/** The outcome of one Cluster/Ping call: its status code. */
const ping = (client: ClusterClient) =>
  Effect.async<status>((resume) => {
    client.ping(
      { target: undefined, relay: [], payload: "p" },
      new Metadata(),
      { deadline: Date.now() + 10_000 },
      (error) => resume(Effect.succeed(error?.code ?? status.OK))
    )
  })

const healthCheck = (address: string, security: GrpcSecurity) =>
  Effect.async<status>((resume) => {
    // A raw client: an empty HealthCheckRequest is zero bytes, and the answer's content does not matter here.
    const client = new Client(address, grpcClientCredentials(security))
    client.makeUnaryRequest(
      "/grpc.health.v1.Health/Check",
      () => Buffer.alloc(0),
      (bytes: Buffer) => bytes,
      Buffer.alloc(0),
      new Metadata(),
      { deadline: Date.now() + 10_000 },
      (error) => {
        client.close()
        resume(Effect.succeed(error?.code ?? status.OK))
      }
    )
  })

const withEnv = <A, E, R>(env: Record<string, string>, effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]))
      Object.assign(process.env, env)
      return saved
    }),
    () => effect,
    (saved) =>
      Effect.sync(() => {
        for (const [k, v] of Object.entries(saved)) {
          if (v === undefined) delete process.env[k]
          else process.env[k] = v
        }
      })
  )

const pingService = grpcService(ClusterService, {
  listActors: () => Effect.die("unused"),
  watchMembership: () => Stream.empty,
  ping: () => Effect.succeed({ hops: [], payload: "pong" })
})

/** A Cluster service over TLS with `extra` settings (a token, client certificates), and clients of it. */
const tlsServer = (ca: ReturnType<typeof writeLocalCa>, extra: Record<string, string>) =>
  Effect.map(
    withEnv(
      { REEF_GRPC_TLS_CA: ca.caFile, REEF_GRPC_TLS_CERT: ca.certFile, REEF_GRPC_TLS_KEY: ca.keyFile, ...extra },
      serveGrpc({ services: [pingService] })
    ),
    (server) => ({
      address: server.address,
      clientWith: (channel: ChannelCredentials) =>
        Effect.acquireRelease(
          Effect.sync(() => new ClusterClient(server.address, channel)),
          (c) => Effect.sync(() => c.close())
        )
    })
  )

describe("gRPC over TLS with client authentication", () => {
  it(
    "a bearer token: none is UNAUTHENTICATED, another PERMISSION_DENIED; health stays open",
    () =>
      Effect.gen(function* () {
        const ca = writeLocalCa(tempDir("grpc"))
        const server = yield* tlsServer(ca, { REEF_GRPC_TOKEN: "s3cret" })
        const clientWith = (security: GrpcSecurity) => server.clientWith(grpcClientCredentials(security))
        const tls = { caFile: ca.caFile }
        expect(yield* ping(yield* clientWith({ tls, token: "s3cret" }))).toBe(status.OK)
        expect(yield* ping(yield* clientWith({ tls }))).toBe(status.UNAUTHENTICATED)
        expect(yield* ping(yield* clientWith({ tls, token: "guess" }))).toBe(status.PERMISSION_DENIED)
        expect(yield* healthCheck(server.address, { tls })).toBe(status.OK)
        // Plaintext to a TLS server never gets an answer.
        expect(yield* ping(yield* server.clientWith(credentials.createInsecure()))).toBe(status.UNAVAILABLE)
      }).pipe(Effect.scoped, Effect.runPromise),
    120_000
  )

  it(
    "mutual TLS: a client without a certificate signed by the CA is refused",
    () =>
      Effect.gen(function* () {
        const ca = writeLocalCa(tempDir("mtls"))
        const other = writeLocalCa(tempDir("other"))
        const server = yield* tlsServer(ca, { REEF_GRPC_TLS_CLIENT_AUTH: "1" })
        const clientWith = (security: GrpcSecurity) => server.clientWith(grpcClientCredentials(security))
        expect(
          yield* ping(yield* clientWith({ tls: { caFile: ca.caFile, certFile: ca.certFile, keyFile: ca.keyFile } }))
        ).toBe(status.OK)
        expect(yield* ping(yield* clientWith({ tls: { caFile: ca.caFile } }))).toBe(status.UNAVAILABLE)
        expect(
          yield* ping(
            yield* clientWith({ tls: { caFile: ca.caFile, certFile: other.certFile, keyFile: other.keyFile } })
          )
        ).toBe(status.UNAVAILABLE)
      }).pipe(Effect.scoped, Effect.runPromise),
    120_000
  )
})
