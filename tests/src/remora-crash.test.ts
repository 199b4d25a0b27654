/**
 * Remora survives kill -9 (issue 21), on real processes over a spawned nats-server, driven through
 * reef.v1.Execution by concurrent signed submitters (token transfers over 50 skewed accounts and YCSB writes,
 * some signatures bad):
 *
 * - a worker is killed with SIGKILL mid-run and restarted with the same id (a new incarnation): every committed
 *   transaction still completes (recovery replays from the last persisted epoch) and the executed state equals
 *   the sequential reference execution of the committed order;
 * - the coordinator is killed with SIGKILL mid-run and restarted on the same --data-dir: every receipt given
 *   before is answered identically, a resubmitted id gets its original receipt and is never executed twice,
 *   the chain continues at the next height, and the state equals the reference.
 */
import { mkdtemp } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  ExecutionCallError,
  makeExecutionClient,
  type RemoraClient,
  receiptOrder,
  referenceHash,
  type Submitted,
  signedWorkload
} from "@reef/coordinator"
import { freePort } from "@reef/kernel"
import type { Receipt, Transaction } from "@reef/proto"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ActorProcess, type Harness, makeHarness, startActorProcess, startNats } from "./harness.js"
import { completeState } from "./remora-harness.js"

/** Token transfers and YCSB writes, interleaved, with 3% bad signatures. */
const mixedWorkload = (n: number, seed: number, prefix: string) => {
  const tokens = signedWorkload(
    { kind: "token", accounts: 50, zipf: 0.9, maxAmount: 100, statelessCostUs: 0, statefulCostUs: 0 },
    n / 2,
    seed,
    0.03,
    `${prefix}t-`
  )
  const ycsb = signedWorkload(
    { kind: "ycsb", keys: 200, objectsPerTx: 3, zipf: 0.8, statelessCostUs: 0, statefulCostUs: 0 },
    n / 2,
    seed + 1,
    0.03,
    `${prefix}y-`
  )
  const txs: Array<Transaction> = []
  for (let i = 0; i < n / 2; i++) txs.push(tokens.txs[i]!, ycsb.txs[i]!)
  return { txs, byId: new Map([...tokens.byId, ...ycsb.byId]) }
}

/** Retries `effect` until it succeeds, for at most `seconds` (a liveness bound, not a performance claim). */
const within = <A, E>(effect: Effect.Effect<A, E>, seconds: number) =>
  Effect.runPromise(effect.pipe(Effect.retry(Schedule.spaced("200 millis").pipe(Schedule.upTo(`${seconds} seconds`)))))

/**
 * Submits `txs` with at most `inFlight` unanswered at once, each outcome kept by index as it comes; a broken
 * stream (the coordinator died) leaves the outcome unknown (undefined) and the submitter carries on.
 */
const submitter = (client: RemoraClient, txs: ReadonlyArray<Transaction>, inFlight: number) => {
  const outcomes: Array<Submitted | ExecutionCallError | undefined> = new Array(txs.length)
  let next = 0
  let answered = 0
  let stopped = false
  let resolveDone: () => void = () => {}
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve
  })
  const pump = () => {
    while (!stopped && next < txs.length && next - answered < inFlight) {
      const index = next++
      client.submitCallback(txs[index]!, (outcome) => {
        outcomes[index] = outcome
        if (++answered === txs.length || (stopped && answered === next)) resolveDone()
        else pump()
      })
    }
  }
  if (txs.length === 0) resolveDone()
  else pump()
  return {
    outcomes,
    done,
    get answered() {
      return answered
    },
    stop: () => {
      stopped = true
      if (answered === next) resolveDone()
    }
  }
}

const executed = (outcomes: ReadonlyArray<Submitted | ExecutionCallError | undefined>): Array<Receipt> =>
  outcomes.flatMap((o) =>
    o !== undefined && !(o instanceof ExecutionCallError) && o._tag === "Executed" ? [o.receipt] : []
  )

const waitExit = (p: ActorProcess) => p.exited

interface Cluster {
  harness: Harness
  natsUrl: string
  port: number
  dataDir: string
  coordinator: ActorProcess
  workers: Array<ActorProcess>
  client: RemoraClient
}

type Base = Omit<Cluster, "coordinator" | "workers" | "client">

/** The worker scenario keeps nothing on disk (1 s epochs, in memory); the coordinator's needs its disk. */
const coordinatorArgs = (c: Base, cluster: string) =>
  cluster === "remora-crash-coord"
    ? ["--window-ms", "100", "--epoch-ms", "300", "--data-dir", c.dataDir]
    : ["--window-ms", "100", "--in-memory"]

const startCoordinator = (c: Base, cluster: string) =>
  startActorProcess(c.harness, {
    role: "coordinator",
    id: "x1",
    natsUrl: c.natsUrl,
    cluster,
    extraArgs: ["--execution-port", String(c.port), ...coordinatorArgs(c, cluster)]
  })

const startWorker = (c: Base, cluster: string, id: string) =>
  startActorProcess(c.harness, {
    role: "worker",
    id,
    natsUrl: c.natsUrl,
    cluster,
    extraArgs: ["--coordinator", "x1", "--cores", "4"]
  })

const connect = (harness: Harness, port: number) =>
  harness.run(makeExecutionClient({ address: `127.0.0.1:${port}`, timeoutMs: 120_000 }))

const useCluster = (cluster: string) => {
  const fixture = { c: undefined as Cluster | undefined }
  const harness = makeHarness()
  beforeAll(async () => {
    const nats = await startNats(harness)
    const port = await Effect.runPromise(freePort)
    const dataDir = await mkdtemp(join(tmpdir(), "reef-remora-crash-"))
    const base = { harness, natsUrl: nats.url, port, dataDir }
    const [coordinator, ...workers] = await Promise.all([
      startCoordinator(base, cluster),
      ...["w1", "w2", "w3"].map((id) => startWorker(base, cluster, id))
    ])
    const client = await connect(harness, port)
    await within(client.state.pipe(Effect.filterOrFail((s) => s.workers.length === 3)), 60)
    fixture.c = { ...base, coordinator: coordinator!, workers, client }
  }, 120_000)
  afterAll(() => harness.close())
  return fixture
}

describe("Remora: kill -9 of a worker, restarted with the same id", () => {
  const fixture = useCluster("remora-crash-worker")

  it("completes every committed transaction and ends in the reference state", async () => {
    const c = fixture.c!
    const workload = mixedWorkload(6_000, 41, "wk")
    const run = submitter(c.client, workload.txs, 400)
    // Kill w2 while a third of the transactions have their receipts and the rest are in flight.
    await within(
      Effect.suspend(() => (run.answered >= 2_000 ? Effect.void : Effect.fail("not yet"))),
      120
    )
    const w2 = c.workers[1]!
    w2.child.kill("SIGKILL")
    await waitExit(w2)
    c.workers[1] = await startWorker(c, "remora-crash-worker", "w2")
    await Promise.race([
      run.done,
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error(`only ${run.answered} of ${workload.txs.length} answered`)), 150_000)
      )
    ])
    const receipts = executed(run.outcomes)
    // Every submission was accepted and executed: nothing was lost with the worker.
    expect(run.outcomes.filter((o) => o === undefined || o instanceof ExecutionCallError)).toEqual([])
    expect(receipts.length).toBe(workload.txs.length)
    expect(new Set(receipts.map((r) => r.seq)).size).toBe(receipts.length)
    const state = await completeState(c.client)
    expect(state.completed).toBe(workload.txs.length)
    expect(state.stateHash).toBe(referenceHash(receiptOrder(receipts), workload.byId))
    // The coordinator said it recovered, and how.
    expect(c.coordinator.lines.some((l) => /recovery after w2 restarted/.test(l))).toBe(true)
  }, 300_000)
})

describe("Remora: kill -9 of the coordinator, restarted on its data directory", () => {
  const fixture = useCluster("remora-crash-coord")

  it("keeps every receipt, never executes an id twice, and ends in the reference state", async () => {
    const c = fixture.c!
    const workload = mixedWorkload(4_000, 52, "co")
    const first = workload.txs.slice(0, 3_000)
    const run = submitter(c.client, first, 300)
    await within(
      Effect.suspend(() => (run.answered >= 1_200 ? Effect.void : Effect.fail("not yet"))),
      120
    )
    c.coordinator.child.kill("SIGKILL")
    await waitExit(c.coordinator)
    run.stop()
    await run.done
    const before = executed(run.outcomes)
    expect(before.length).toBeGreaterThanOrEqual(1_200)

    c.coordinator = await startCoordinator(c, "remora-crash-coord")
    const client = await connect(c.harness, c.port)
    // Recovered: every receipt given before the kill is answered, identically.
    for (const r of before) {
      const got = await within(client.getReceipt(r.txId), 120)
      expect(got.receipt).toEqual(r)
    }
    // Everything is submitted again (ids given a receipt must get the same one), then the rest.
    const again = submitter(client, workload.txs, 300)
    await Promise.race([
      again.done,
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error(`only ${again.answered} of ${workload.txs.length} answered`)), 150_000)
      )
    ])
    const failed = again.outcomes.filter(
      (o) => o === undefined || o instanceof ExecutionCallError || o._tag !== "Executed"
    )
    expect(failed).toEqual([])
    const receipts = executed(again.outcomes)
    const byId = new Map(receipts.map((r) => [r.txId, r]))
    for (const r of before) expect(byId.get(r.txId)).toEqual(r)
    // One seq per id and no seq wasted on a second execution: seqs are exactly 1..N.
    const seqs = receipts.map((r) => r.seq).sort((a, b) => a - b)
    expect(seqs).toEqual(Array.from({ length: workload.txs.length }, (_, i) => i + 1))
    const state = await completeState(client)
    expect(state.committed).toBe(workload.txs.length)
    // It resumed from its disk and said so; it was UNAVAILABLE until its replay completed.
    expect(c.coordinator.lines.some((l) => /coordinator restarted \(LMDB/.test(l))).toBe(true)
    expect(c.coordinator.lines.some((l) => /coordinator recovered: serving again/.test(l))).toBe(true)
    expect(state.stateHash).toBe(referenceHash(receiptOrder(receipts), workload.byId))
  }, 300_000)
})
