/**
 * Fig. 8 of the Remora paper on real processes: a coordinator (`reef run coordinator --data-dir`) and three
 * workers over a spawned nats-server, a constant YCSB load from one gRPC client, one worker killed with SIGKILL
 * at a random time and restarted with the same id (the paper spawns a replacement). Throughput and p90 latency
 * are recorded per 250 ms of completion time. Then the coordinator itself is killed and restarted on its data
 * directory.
 *
 * - `recoveryDipSeconds`: time with throughput below half the median of the 5 s before the kill (the paper
 *   sees about 2 s);
 * - `coordinatorRestartToServingMs`: from spawning the new coordinator process to it serving again (its replay
 *   done: the log line it prints), and `coordinatorKillToReceiptMs`: from the kill to the next receipt.
 */
import { mkdtemp } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ExecutionCallError, makeExecutionClient, type Submitted } from "@reef/coordinator"
import { startReefChild } from "@reef/devkit"
import { freePort, startNatsServer } from "@reef/kernel"
import { RejectReason, type Transaction } from "@reef/proto"
import { bodySource, ed25519Signer, Prng, signingKeyFromSeed, transactionStream } from "@reef/remora"
import { percentile } from "@reef/stats"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"

const BUCKET_MS = 250

export interface Fig8Run {
  readonly rateTps: number
  readonly killAtS: number
  /** Per bucket: its start (s since the load began), completions per second, p90 latency (ms). */
  readonly timeline: ReadonlyArray<{ readonly t: number; readonly tps: number; readonly p90Ms: number }>
  readonly preFailureTps: number
  readonly recoveryDipSeconds: number
  readonly coordinatorRestartToServingMs: number
  readonly coordinatorKillToReceiptMs: number
  readonly transactions: number
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const trace = (line: string) => {
  if (process.env.REMORA_BENCH_DEBUG) console.error(`[fig8] ${line}`)
}

export const runFig8 = async (options: { readonly quick: boolean; readonly seed: number }): Promise<Fig8Run> => {
  const scope = Effect.runSync(Scope.make())
  const run = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromise(Scope.extend(effect, scope))
  try {
    const random = new Prng(options.seed)
    const nats = await run(startNatsServer({ jetstream: false }))
    const port = await Effect.runPromise(freePort)
    const dataDir = await mkdtemp(join(tmpdir(), "reef-bench-fig8-"))
    const cluster = `fig8-${options.seed}`
    const lines: Array<string> = []
    const child = (role: string, id: string, extra: ReadonlyArray<string>) =>
      run(
        startReefChild({
          name: `${role}/${id}`,
          args: ["run", role, "--id", id, "--nats", nats.url, "--cluster", cluster, ...extra],
          env: { OTEL_SDK_DISABLED: "true" },
          onLine: (line) => {
            if (role === "coordinator") lines.push(line)
          }
        })
      )
    const coordinatorArgs = ["--execution-port", String(port), "--data-dir", dataDir, "--window-ms", "100"]
    let coordinator = await child("coordinator", "x1", coordinatorArgs)
    const workers = new Map<string, Awaited<ReturnType<typeof child>>>()
    for (const id of ["w1", "w2", "w3"]) workers.set(id, await child("worker", id, ["--coordinator", "x1"]))
    trace("processes up")
    const client = await run(makeExecutionClient({ address: `127.0.0.1:${port}`, timeoutMs: 60_000 }))

    // ---- constant load ----
    const rateTps = options.quick ? 600 : 1_000
    const key = signingKeyFromSeed(new Uint8Array(32).fill(8))
    const next = transactionStream(
      bodySource(
        { kind: "ycsb", keys: 10_000, objectsPerTx: 2, zipf: 0.6, statelessCostUs: 0, statefulCostUs: 0 },
        random.fork()
      ),
      ed25519Signer(key),
      random.fork(),
      0,
      `f8-${options.seed}-`
    )
    const began = performance.now()
    const completions: Array<{ at: number; latencyMs: number }> = []
    let lastReceiptAt = 0
    let loading = true
    let closing = false
    const submit = (tx: Transaction, firstAt: number): void => {
      if (closing) return
      client.submitCallback(tx, (o: Submitted | ExecutionCallError) => {
        const retry =
          o instanceof ExecutionCallError ||
          (o._tag === "Rejected" &&
            (o.rejection.reason === RejectReason.REJECT_REASON_UNAVAILABLE ||
              o.rejection.reason === RejectReason.REJECT_REASON_OVERLOADED))
        if (retry) {
          if (!closing) setTimeout(() => submit(tx, firstAt), 100)
          return
        }
        const now = performance.now()
        lastReceiptAt = now
        completions.push({ at: now - began, latencyMs: now - firstAt })
      })
    }
    const pacer = (async () => {
      let sent = 0
      while (loading) {
        const due = Math.floor(((performance.now() - began) / 1000) * rateTps)
        for (; sent < due; sent++) submit(next().tx, performance.now())
        await sleep(10)
      }
    })()

    // Warm up, then the worker kill at a random moment, then time to recover.
    const killAtS = (options.quick ? 8 : 12) + random.float() * 4
    await sleep(killAtS * 1000 - (performance.now() - began))
    trace(`kill w2 at ${killAtS} s; ${completions.length} completions so far`)
    const victim = workers.get("w2")!
    victim.kill("SIGKILL")
    await sleep(1_000)
    workers.set("w2", await child("worker", "w2", ["--coordinator", "x1"]))
    await sleep((options.quick ? 15 : 25) * 1000)
    const workerPhaseEndS = (performance.now() - began) / 1000

    // The coordinator: kill -9, restart on its data directory.
    trace(`kill the coordinator; ${completions.length} completions so far`)
    const killedAt = performance.now()
    coordinator.kill("SIGKILL")
    await sleep(500)
    const servingBefore = lines.length
    coordinator = await child("coordinator", "x1", coordinatorArgs)
    const deadline = Date.now() + 120_000
    while (lastReceiptAt < killedAt && Date.now() < deadline) await sleep(20)
    while (!lines.slice(servingBefore).some((l) => /serving again/.test(l)) && Date.now() < deadline) {
      await sleep(20)
    }
    trace("coordinator back")
    loading = false
    await pacer
    const served = lines.slice(servingBefore).find((l) => /serving again/.test(l))
    const coordinatorRestartToServingMs = Number(/serving again (\d+) ms/.exec(served ?? "")?.[1] ?? Number.NaN)

    closing = true

    // ---- the figure ----
    const buckets = new Map<number, Array<number>>()
    for (const c of completions) {
      if (c.at / 1000 > workerPhaseEndS) continue
      const b = Math.floor(c.at / BUCKET_MS)
      let list = buckets.get(b)
      if (list === undefined) {
        list = []
        buckets.set(b, list)
      }
      list.push(c.latencyMs)
    }
    const last = Math.floor((workerPhaseEndS * 1000) / BUCKET_MS)
    const timeline = Array.from({ length: last }, (_, b) => {
      const list = buckets.get(b) ?? []
      return {
        t: (b * BUCKET_MS) / 1000,
        tps: (list.length * 1000) / BUCKET_MS,
        p90Ms: list.length === 0 ? 0 : percentile(list, 90)
      }
    })
    const before = timeline.filter((p) => p.t >= killAtS - 5 && p.t < killAtS).map((p) => p.tps)
    const preFailureTps = before.length === 0 ? 0 : percentile(before, 50)
    const dip = timeline.filter((p) => p.t >= killAtS && p.tps < preFailureTps / 2).length
    return {
      rateTps,
      killAtS,
      timeline,
      preFailureTps,
      recoveryDipSeconds: (dip * BUCKET_MS) / 1000,
      coordinatorRestartToServingMs,
      coordinatorKillToReceiptMs: lastReceiptAt - killedAt,
      transactions: completions.length
    }
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}
