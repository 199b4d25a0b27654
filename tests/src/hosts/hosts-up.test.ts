/**
 * `pnpm hosts:up`'s layout (hosts-up.ts), checked from outside: three hosts, every actor on its host's
 * server, and `reef status --gateway <h1>` run as a separate process must list every actor of the plan (and
 * each replica's NIC engine) as joined, the gRPC ones announced with their own host's address (so clients on other hosts reach them).
 *
 * Skips, saying why, where network namespaces cannot be made (not root, no iproute2).
 */
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { reefArgv, repoRoot } from "@reef/devkit"
import { hostsUnavailable } from "@reef/devkit/hosts"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { hostsUp, PORTS } from "./hosts-up.js"

const unavailable = hostsUnavailable()
const run = promisify(execFile)

interface StatusMember {
  readonly role: string
  readonly id: string
  readonly state?: string
  readonly endpoints?: Readonly<Record<string, string>>
}

describe.skipIf(unavailable !== undefined)(
  `pnpm hosts:up${unavailable === undefined ? "" : ` (skipped: ${unavailable})`}`,
  () => {
    it("places replicas, AirDB clients, the coordinator and workers across 3 hosts; the gateway sees them all", async () => {
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const up = yield* hostsUp({ n: 3, delayMs: 0.5, jitterMs: 0.05, say: (line) => console.log(line) })
            const gateway = `${up.hosts.hosts[0]!.address}:${PORTS.gateway}`
            const want = up.plan.map((a) => `${a.role}/${a.id}`).sort()
            const status = async () => {
              const { stdout } = await run(
                process.execPath,
                [...reefArgv(["status", "--gateway", gateway, "--json"])],
                {
                  cwd: repoRoot,
                  env: { ...process.env, OTEL_SDK_DISABLED: "true", REEF_CLUSTER_FILE: "" }
                }
              )
              return (JSON.parse(stdout) as { members: ReadonlyArray<StatusMember> }).members
            }
            // Presence spreads over the NATS cluster: wait until every actor of the plan is listed.
            let members: ReadonlyArray<StatusMember> = []
            const deadline = Date.now() + 60_000
            for (;;) {
              members = yield* Effect.promise(status)
              const joined = members.map((m) => `${m.role}/${m.id}`)
              if (want.every((w) => joined.includes(w)) || Date.now() > deadline) break
              yield* Effect.sleep("500 millis")
            }
            const context = JSON.stringify(members, null, 1)
            // Every actor of the plan, and a replica's NIC engine beside it (its own actor, same id).
            const engines = up.plan.filter((a) => a.role === "replica").map((a) => `nic/${a.id}`)
            expect(members.map((m) => `${m.role}/${m.id}`).sort(), context).toEqual([...want, ...engines].sort())
            expect(
              members.filter((m) => m.state !== "joined"),
              context
            ).toEqual([])
            for (const actor of up.plan) {
              const member = members.find((m) => m.role === actor.role && m.id === actor.id)!
              expect(member.endpoints?.metrics, context).toMatch(
                new RegExp(`^http://${actor.host.address}:\\d+/metrics$`)
              )
            }
            for (const actor of up.plan.filter((a) => a.endpoint !== undefined && a.role !== "replica")) {
              const member = members.find((m) => m.role === actor.role && m.id === actor.id)!
              // Announced with its host's address: reachable from the other hosts.
              expect(Object.values(member.endpoints ?? {}), context).toContain(actor.endpoint)
            }
          })
        )
      )
    }, 300_000)
  }
)
