/**
 * Elle over real processes: four AirDB client processes run list-append transactions on one JetStream store
 * while processes are killed (SIGKILL) and restarted as new incarnations; the recorded history must be strictly
 * serializable (no G0, G1a-c, G-single, G2, real-time cycle), and a fresh client must start cold and read lists
 * that are prefixes of the version order.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { startNatsServer } from "@reef/kernel"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { openClient } from "../client/client.js"
import { openSegmentStore } from "../service/storage.js"
import { checkListAppend, type Txn } from "./elle.js"
import { decodeList, type PlannedOp, plannedOps } from "./list-append.js"

const PROCESSES = 4
const TXNS_PER_PROCESS = 50
const KEYS = 6
const script = fileURLToPath(new URL("./list-append-process.ts", import.meta.url))
const scope = Effect.runSync(Scope.make())
let natsUrl = ""

beforeAll(async () => {
  natsUrl = (await Effect.runPromise(Scope.extend(startNatsServer({ jetstream: true }), scope))).url
})
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

interface Running {
  readonly child: ChildProcess
  readonly exited: Promise<void>
}

describe("list-append over real processes with kills", () => {
  it("records a strictly serializable history", async () => {
    const storage = { backend: "jetstream" as const, natsUrl }
    const history = new Map<number, Txn>()
    const invoked = new Map<number, { process: string; ops: ReadonlyArray<PlannedOp>; at: number }>()
    const doneBy = new Map<string, number>()
    const live = new Map<string, Running>()
    let kills = 0
    const start = (process: string, incarnation: number): Running => {
      const child = spawn(
        globalThis.process.execPath,
        [
          "--conditions=@reef/source",
          "--import",
          "tsx",
          script,
          JSON.stringify({
            storage,
            store: "elle",
            process,
            incarnation,
            firstValue:
              (Number(process.slice(1)) + 1) * 10_000_000 + incarnation * 100_000 + (doneBy.get(process) ?? 0),
            txns: TXNS_PER_PROCESS - (doneBy.get(process) ?? 0),
            keys: KEYS,
            seed: Number(process.slice(1)) * 1000 + incarnation,
            isolation: "serializable"
          })
        ],
        { stdio: ["ignore", "pipe", "inherit"] }
      )
      createInterface({ input: child.stdout! }).on("line", (line) => {
        const m = JSON.parse(line)
        if (m.invoke !== undefined) invoked.set(m.invoke, { process, ops: m.ops, at: m.at })
        if (m.complete !== undefined) {
          const inv = invoked.get(m.complete)!
          history.set(m.complete, {
            id: m.complete,
            process,
            type: m.type,
            ops: m.type === "ok" ? m.ops : plannedOps(inv.ops),
            invokedAt: inv.at,
            completedAt: m.type === "info" ? Number.POSITIVE_INFINITY : m.at
          })
          doneBy.set(process, (doneBy.get(process) ?? 0) + 1)
        }
      })
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
      return { child, exited }
    }
    const incarnations = new Map<string, number>()
    for (let p = 0; p < PROCESSES; p++) {
      const name = `p${p}`
      incarnations.set(name, 0)
      live.set(name, start(name, 0))
    }
    const allDone = () => [...incarnations.keys()].every((p) => (doneBy.get(p) ?? 0) >= TXNS_PER_PROCESS)
    // Kill a process every ~1.5 s (not the same twice in a row), restart it as a new incarnation.
    const deadline = Date.now() + 150_000
    let victim = 0
    while (!allDone() && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 1500))
      const name = `p${victim++ % PROCESSES}`
      const running = live.get(name)!
      if (kills < 6 && (doneBy.get(name) ?? 0) < TXNS_PER_PROCESS) {
        running.child.kill("SIGKILL")
        await running.exited
        kills++
        // What it invoked and never completed has an unknown outcome.
        for (const [id, inv] of invoked) {
          if (inv.process === name && !history.has(id)) {
            history.set(id, {
              id,
              process: name,
              type: "info",
              ops: plannedOps(inv.ops),
              invokedAt: inv.at,
              completedAt: Number.POSITIVE_INFINITY
            })
            doneBy.set(name, (doneBy.get(name) ?? 0) + 1)
          }
        }
        const next = incarnations.get(name)! + 1
        incarnations.set(name, next)
        live.set(name, start(name, next))
      } else {
        // Restart those that finished, so every process's loop ends.
        if (running.child.exitCode !== null && (doneBy.get(name) ?? 0) < TXNS_PER_PROCESS)
          live.set(name, start(name, incarnations.get(name)! + 1))
      }
    }
    await Promise.all([...live.values()].map((r) => r.exited))
    expect(allDone()).toBe(true)

    // A fresh client: cold start after the kills; every list it reads is in the history's version order.
    const finalLists = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const c = yield* openClient(yield* openSegmentStore(storage), { store: "elle" })
          return yield* Effect.forEach(
            Array.from({ length: KEYS }, (_, k) => `k${k}`),
            (key) => Effect.map(c.get(key), (r) => ({ f: "read" as const, key, value: decodeList(r.value) }))
          )
        })
      )
    )
    const now = Date.now()
    const txns = [
      ...history.values(),
      { id: 1, process: "checker", type: "ok" as const, ops: finalLists, invokedAt: now, completedAt: now + 1 }
    ]
    const result = checkListAppend(txns, "strict-serializable")
    expect(result.anomalies).toEqual([])
    expect(kills).toBeGreaterThan(0)
    expect(txns.filter((t) => t.type === "ok").length).toBeGreaterThan((PROCESSES * TXNS_PER_PROCESS) / 2)
  }, 240_000)
})
