/**
 * docs/deploy.md, checked: its NATS configuration and its `reef run` commands, exactly as written, on three
 * hosts of the hosts harness (its machines 10.0.0.1–3 are the hosts' addresses). The servers must form one
 * cluster, a write through one machine's replica must be read through another's, and once machine 1's
 * nats-server is killed its replica must still serve (it reconnects to another server of the cluster).
 *
 * Skips, saying why, where network namespaces cannot be made.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { repoRoot, startReefChild } from "@reef/devkit"
import { hostsUnavailable, makeHostNetwork, routesFormedOf, startHostNats } from "@reef/devkit/hosts"
import { findNatsServerBinary } from "@reef/kernel"
import { makeKvClient } from "@reef/replica"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { eventually } from "./harness.js"

const unavailable = hostsUnavailable()
const doc = readFileSync(join(repoRoot, "docs", "deploy.md"), "utf8")
const FENCE = "`".repeat(3)
const fenced = (language: string) => {
  const block = doc.split(`${FENCE}${language}\n`)[1]?.split(FENCE)[0]
  if (block === undefined) throw new Error(`docs/deploy.md has no ${FENCE}${language} block`)
  return block
}
const MACHINES = ["10.0.0.1", "10.0.0.2", "10.0.0.3"]

describe.skipIf(unavailable !== undefined)(
  `docs/deploy.md on hosts${unavailable === undefined ? "" : ` (skipped: ${unavailable})`}`,
  () => {
    it("its NATS cluster and replicas run as written, across hosts, and survive a server's death", async () => {
      const config = fenced("conf")
      const commands = fenced("sh")
        .split("\n")
        .filter((line) => line.startsWith("reef run "))
      expect(commands).toHaveLength(3)
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const network = yield* makeHostNetwork(3)
            const { hosts } = network
            const place = (text: string) =>
              MACHINES.reduce((t, machine, i) => t.replaceAll(machine, hosts[i]!.address), text)
            const dir = mkdtempSync(join(tmpdir(), "reef-deploy-"))
            const binary = findNatsServerBinary()!
            const servers = []
            for (const [i, host] of hosts.entries()) {
              const file = join(dir, `n${i + 1}.conf`)
              writeFileSync(file, place(config).replace(/^server_name: n1$/m, `server_name: n${i + 1}`))
              servers.push(yield* startHostNats(binary, host, file))
            }
            yield* routesFormedOf(hosts, 60)
            const lines: Array<string> = []
            yield* Effect.forEach(
              commands,
              (command, i) =>
                startReefChild({
                  name: `r${i + 1}`,
                  args: place(command).split(/\s+/).slice(1),
                  prefix: hosts[i]!.exec,
                  env: { OTEL_SDK_DISABLED: "true" },
                  startTimeoutMs: 90_000,
                  onLine: (line) => lines.push(`[r${i + 1}] ${line}`)
                }),
              { concurrency: "unbounded" }
            )
            const addresses = hosts.map((h) => `${h.address}:7001`)
            const via = (i: number) =>
              makeKvClient({ replicas: addresses, mode: "colocated", clientIndex: i, timeoutMs: 3_000 })
            const [c1, c2, c3] = [yield* via(0), yield* via(1), yield* via(2)]
            yield* c1.set("deploy", Buffer.from("written on machine 1"))
            const read = yield* c3.get("deploy")
            expect(Buffer.from(read.value).toString()).toBe("written on machine 1")
            // Machine 1's server dies: its replica reconnects to another server and still serves.
            yield* servers[0]!.kill
            yield* eventually(c1.set("deploy", Buffer.from("after n1 died")), 60)
            const after = yield* c2.get("deploy")
            expect(Buffer.from(after.value).toString(), lines.slice(-30).join("\n")).toBe("after n1 died")
          })
        )
      )
    }, 240_000)
  }
)
