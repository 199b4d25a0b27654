/**
 * Per-role identities and permissions enforced by a real nats-server (nats-grants.ts, nats-security.ts): a
 * process without credentials, or with credentials the server does not know, is refused at connect; a
 * worker's identity cannot publish a POPUC round, a client's cannot publish a heartbeat; the kernel works
 * over the secured server (asks answered through the per-user inboxes).
 */
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { NatsConnection } from "@nats-io/nats-core"
import { createUser } from "@nats-io/nkeys"
import { connect } from "@nats-io/transport-node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { spawn } from "./actor-runtime.js"
import { CounterAddRpc, CounterGetRpc, counterActor } from "./counter-actor.js"
import { natsKernelLayer } from "./kernel-layer.js"
import { Messenger } from "./messenger.js"
import { authorizationConfig, type GrantSpec, grantFor } from "./nats-grants.js"
import { inboxPrefixOf, type NatsSecurity, natsConnectOptions } from "./nats-security.js"
import { startNatsServer } from "./nats-server.js"

const cluster = "auth"
const specs: ReadonlyArray<GrantSpec> = [
  { name: "replica", roles: ["replica", "nic"], talksTo: ["replica"], popuc: true },
  { name: "worker", roles: ["worker"], talksTo: ["coordinator", "worker"] },
  { name: "counter", roles: ["counter"], talksTo: ["counter"] },
  { name: "client", roles: [], talksTo: ["*"], discovery: true }
]

/** An identity per spec: its seed in a file of its own (0600), as `reef up` writes them. */
const identities = () => {
  const dir = mkdtempSync(join(tmpdir(), "reef-auth-"))
  return new Map(
    specs.map((spec) => {
      const user = createUser()
      const file = join(dir, `${spec.name}.nk`)
      writeFileSync(file, `${new TextDecoder().decode(user.getSeed())}\n`, { mode: 0o600 })
      return [spec.name, { spec, publicKey: user.getPublicKey(), file }] as const
    })
  )
}

const securedServer = (ids: ReturnType<typeof identities>) =>
  startNatsServer({
    jetstream: false,
    config: authorizationConfig(
      [...ids.values()].map((id) => ({
        publicKey: id.publicKey,
        name: id.spec.name,
        grant: grantFor(cluster, id.spec, inboxPrefixOf(id.publicKey))
      }))
    )
  })

const connectAs = (url: string, security: NatsSecurity) =>
  Effect.acquireRelease(
    Effect.promise(() => connect(natsConnectOptions({ servers: url, reconnect: false }, security))),
    (nc) => Effect.promise(() => nc.close())
  )

/** What a failed connect says (the server's authorization error). */
const refusal = (url: string, security: NatsSecurity) =>
  Effect.promise(() =>
    connect(natsConnectOptions({ servers: url, reconnect: false, maxReconnectAttempts: 0 }, security)).then(
      async (nc) => {
        await nc.close()
        return "connected"
      },
      (e: Error) => e.message
    )
  )

/** Messages `sub` receives on `subject` after `publisher` published one there (and a flush round trip). */
const deliveredTo = (sub: NatsConnection, publisher: NatsConnection, subject: string) =>
  Effect.promise(async () => {
    const got: Array<string> = []
    const s = sub.subscribe(subject, {
      callback: (_e, m) => {
        got.push(m.subject)
      }
    })
    await sub.flush()
    publisher.publish(subject, new Uint8Array([1]))
    await publisher.flush().catch(() => {})
    // A marker from the subscriber itself: once it is back, anything the server forwarded has arrived.
    await sub.request(`$SRV.PING.none`, undefined, { timeout: 200 }).catch(() => {})
    await sub.flush()
    s.unsubscribe()
    return got.length
  })

describe("NATS authentication and per-role permissions", () => {
  it.scopedLive("refuses a connection without credentials or with credentials the server does not know", () =>
    Effect.gen(function* () {
      const ids = identities()
      const server = yield* securedServer(ids)
      expect(yield* refusal(server.url, {})).toMatch(/authorization/i)
      const stranger = identities().get("replica")!
      expect(yield* refusal(server.url, { nkeyFile: stranger.file })).toMatch(/authorization/i)
      expect(yield* refusal(server.url, { nkeyFile: ids.get("replica")!.file })).toBe("connected")
    })
  )

  it.scopedLive("a worker cannot publish a POPUC round and a client cannot publish a heartbeat", () =>
    Effect.gen(function* () {
      const ids = identities()
      const server = yield* securedServer(ids)
      const as = (name: string) => connectAs(server.url, { nkeyFile: ids.get(name)!.file })
      const replica = yield* as("replica")
      const worker = yield* as("worker")
      const client = yield* as("client")
      const errors: Array<string> = []
      void (async () => {
        for await (const s of worker.status()) if (s.type === "error") errors.push(String(s.error))
      })()
      const round = `reef.${cluster}.popuc-all.g1`
      const heartbeat = `reef.${cluster}.$presence.replica.r9`
      expect(yield* deliveredTo(replica, replica, round)).toBe(1)
      expect(yield* deliveredTo(replica, worker, round)).toBe(0)
      expect(yield* deliveredTo(replica, worker, `reef.${cluster}.popuc.g1.r1`)).toBe(0)
      expect(yield* deliveredTo(replica, client, heartbeat)).toBe(0)
      expect(yield* deliveredTo(replica, client, round)).toBe(0)
      // What each may do still goes through.
      expect(yield* deliveredTo(client, replica, heartbeat)).toBe(1)
      expect(yield* deliveredTo(replica, client, `reef.${cluster}.replica.r1`)).toBe(1)
      expect(errors.join(" ")).toMatch(/permissions violation/i)
    })
  )

  it.scopedLive("an actor and a client over the secured server: asks are answered through per-user inboxes", () =>
    Effect.gen(function* () {
      const ids = identities()
      const server = yield* securedServer(ids)
      const layer = (name: string) =>
        natsKernelLayer({ servers: server.url, name, security: { nkeyFile: ids.get(name)!.file } }, { cluster })
      const actorProcess = yield* Layer.build(layer("counter"))
      yield* spawn(counterActor, "c1").pipe(Effect.provide(actorProcess))
      const clientProcess = yield* Layer.build(layer("client"))
      const counter = { cluster, role: "counter", id: "c1" }
      const value = yield* Effect.gen(function* () {
        const m = yield* Messenger
        yield* m.ask(counter, CounterAddRpc, { key: "k", amount: 5 })
        return yield* m.ask(counter, CounterGetRpc, { key: "k" })
      }).pipe(Effect.provide(clientProcess))
      expect(value.value).toBe(5)
    })
  )
})
