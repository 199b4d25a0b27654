/**
 * docs/deploy.md, checked: its NATS configuration and its `reef run` commands, exactly as written, on three
 * hosts of the hosts harness (its machines 10.0.0.1–3 are the hosts' addresses). The servers must form one
 * cluster, a write through one machine's replica must be read through another's, and once machine 1's
 * nats-server is killed its replica must still serve (it reconnects to another server of the cluster). Its
 * section 4 too: the servers with the `jetstream` block added, the coordinator, the workers and an AirDB client
 * placed as its commands say (a command's machine is the one its `--nats` names); signed transactions
 * submitted to the coordinator from outside must execute on the workers of the other machines (the executed
 * state equals the sequential reference), and the AirDB client must commit and read a transaction on a store
 * whose streams are replicated on the three servers.
 *
 * Skips, saying why, where network namespaces cannot be made.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { credentials } from "@grpc/grpc-js"
import { makeExecutionClient, receiptOrder, referenceHash, signedWorkload } from "@reef/coordinator"
import { repoRoot, startReefChild } from "@reef/devkit"
import { hostsUnavailable, makeHostNetwork, routesFormedOf, startHostNats } from "@reef/devkit/hosts"
import { findNatsServerBinary } from "@reef/kernel"
import { AirDBClient, type AirDbGetResponse, type AirDbTransactResponse } from "@reef/proto"
import { makeKvClient } from "@reef/replica"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { eventually } from "./harness.js"
import { streamsPerServer } from "./hosts/jetstream-streams.js"

const unavailable = hostsUnavailable()
const doc = readFileSync(join(repoRoot, "docs", "deploy.md"), "utf8")
const FENCE = "`".repeat(3)
/** The `nth` block of `language` in the page. */
const fenced = (language: string, nth = 0) => {
  const block = doc.split(`${FENCE}${language}\n`)[nth + 1]?.split(FENCE)[0]
  if (block === undefined) throw new Error(`docs/deploy.md has no ${FENCE}${language} block number ${nth + 1}`)
  return block
}
const commandsOf = (block: string) => block.split("\n").filter((line) => line.startsWith("reef run "))
const MACHINES = ["10.0.0.1", "10.0.0.2", "10.0.0.3"]

describe.skipIf(unavailable !== undefined)(
  `docs/deploy.md on hosts${unavailable === undefined ? "" : ` (skipped: ${unavailable})`}`,
  () => {
    it("its NATS cluster and replicas run as written, across hosts, and survive a server's death", async () => {
      const config = fenced("conf")
      const commands = commandsOf(fenced("sh"))
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

    it("section 4: Remora's coordinator and workers on different machines, AirDB on replicated JetStream", async () => {
      const config = `${fenced("conf")}\n${fenced("conf", 1)}`
      const commands = commandsOf(fenced("console"))
      expect(commands.map((c) => c.split(/\s+/)[2])).toEqual(["coordinator", "worker", "worker", "airdb"])
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const { hosts } = yield* makeHostNetwork(3)
            const dir = mkdtempSync(join(tmpdir(), "reef-deploy-"))
            const place = (text: string) =>
              MACHINES.reduce((t, machine, i) => t.replaceAll(machine, hosts[i]!.address), text)
                .replaceAll("/var/lib/nats", join(dir, "nats"))
                .replaceAll("/var/lib/reef", join(dir, "reef"))
            const binary = findNatsServerBinary()!
            for (const [i, host] of hosts.entries()) {
              const file = join(dir, `n${i + 1}.conf`)
              const own = place(config)
                .replace(/^server_name: n1$/m, `server_name: n${i + 1}`)
                .replace(join(dir, "nats"), join(dir, "nats", `n${i + 1}`))
              writeFileSync(file, own)
              yield* startHostNats(binary, host, file)
            }
            yield* routesFormedOf(hosts, 60)
            const lines: Array<string> = []
            /** The machine a command runs on: the one whose server its --nats names. */
            const machineOf = (command: string) => MACHINES.findIndex((m) => command.includes(`nats://${m}:`))
            yield* Effect.forEach(
              commands,
              (command) =>
                startReefChild({
                  name: command.split(/\s+/)[4]!,
                  args: place(command).split(/\s+/).slice(1),
                  prefix: hosts[machineOf(command)]!.exec,
                  env: { OTEL_SDK_DISABLED: "true" },
                  startTimeoutMs: 90_000,
                  onLine: (line) => lines.push(`[${command.split(/\s+/)[4]}] ${line}`)
                }),
              { concurrency: "unbounded" }
            )
            const context = () => lines.slice(-40).join("\n")
            // Remora: signed transfers submitted from outside, executed by the workers on machines 2 and 3.
            const remora = yield* makeExecutionClient({ address: `${hosts[0]!.address}:7401`, timeoutMs: 30_000 })
            yield* eventually(remora.state.pipe(Effect.filterOrFail((s) => s.workers.length === 2)), 60)
            const spec = {
              kind: "token",
              accounts: 20,
              zipf: 0.5,
              maxAmount: 10,
              statelessCostUs: 0,
              statefulCostUs: 0
            } as const
            const workload = signedWorkload(spec, 40, 29, 0)
            const receipts = yield* Effect.forEach(workload.txs, (tx) => remora.submit(tx), { concurrency: 8 })
            const given = receipts.flatMap((r) => (r._tag === "Executed" ? [r.receipt] : []))
            expect(given.length, context()).toBe(workload.txs.length)
            expect(new Set(given.map((r) => r.worker)), context()).toEqual(new Set(["w1", "w2"]))
            const state = yield* eventually(remora.state.pipe(Effect.filterOrFail((s) => s.complete)), 60)
            expect(state.stateHash, context()).toBe(referenceHash(receiptOrder(given), workload.byId))
            // AirDB: a transaction committed and read back through the client on machine 1.
            const airdb = new AirDBClient(`${hosts[0]!.address}:7301`, credentials.createInsecure())
            const call = <A>(f: (done: (e: Error | null, r: A) => void) => void) =>
              Effect.promise(
                () => new Promise<A>((resolve, reject) => f((e, r) => (e === null ? resolve(r) : reject(e))))
              )
            const put = yield* call<AirDbTransactResponse>((done) =>
              airdb.transact(
                {
                  ops: [{ op: { $case: "put", value: { key: Buffer.from("deploy"), value: Buffer.from("on R3") } } }],
                  maxAttempts: 3
                },
                done
              )
            )
            expect(put.committed, context()).toBe(true)
            const got = yield* call<AirDbGetResponse>((done) => airdb.get({ key: Buffer.from("deploy") }, done))
            expect(Buffer.from(got.value ?? []).toString(), context()).toBe("on R3")
            airdb.close()
            // Every server holds the store's streams, each with three replicas (`--js-replicas 3`).
            const held = yield* streamsPerServer(hosts)
            expect(
              held.map((s) => s.replicas),
              context()
            ).toEqual([[3], [3], [3]])
            expect(Math.min(...held.map((s) => s.streams)), context()).toBeGreaterThan(0)
          })
        )
      )
    }, 240_000)
  }
)
