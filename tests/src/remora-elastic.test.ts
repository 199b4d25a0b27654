/**
 * Remora's elasticity (§4.7) on real processes: `reef run coordinator --autoscale 1..2` with two `reef run worker`
 * processes, one active and one spare, over a spawned nats-server.
 *
 * 1. A load spike (signed transactions with a synthetic stateful cost, kept outstanding far beyond what one
 *    worker's virtual cores finish at once) makes the autoscaler activate the spare, and the spare executes part
 *    of the load (receipts name it).
 * 2. The load stops: the autoscaler retires a worker gracefully (Alg. 5: drain, an epoch ends and is persisted,
 *    its objects go back to the coordinator), and that worker's process stops by itself with exit code 0.
 * 3. More transactions over the same keys then run on the remaining worker, which fetches the retired worker's
 *    objects from the coordinator.
 *
 * Every transaction has exactly one receipt and the executed state equals the sequential reference execution
 * of the receipt order. Conditions are waited on, never timed: the autoscaler's thresholds are far from both
 * the spike's load and an idle pool's.
 */
import { type RemoraClient, receiptOrder, referenceHash, type Submitted, signedWorkload } from "@reef/coordinator"
import type { ExecutionState, Receipt } from "@reef/proto"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ActorProcess, makeHarness, startNats } from "./harness.js"
import { completeState, startRemoraProcesses, submitAll } from "./remora-harness.js"

/** The state once `ok` holds of it (a liveness bound, not a performance claim). */
const stateWhen = (client: RemoraClient, ok: (s: ExecutionState) => boolean, seconds: number) =>
  Effect.runPromise(
    client.state.pipe(
      Effect.filterOrFail(ok),
      Effect.retry(Schedule.spaced("200 millis").pipe(Schedule.upTo(`${seconds} seconds`)))
    )
  )

const receiptsOf = (outcomes: ReadonlyArray<Submitted>): Array<Receipt> =>
  outcomes.map((o) => {
    if (o._tag !== "Executed") throw new Error(`${o.txId} was rejected: ${o.rejection.message}`)
    return o.receipt
  })

describe("Remora's worker pool follows the load (real processes)", () => {
  const harness = makeHarness()
  let client: RemoraClient
  let workers: ReadonlyArray<ActorProcess>
  let coordinator: ActorProcess
  beforeAll(async () => {
    const nats = await startNats(harness)
    const processes = await startRemoraProcesses(harness, {
      natsUrl: nats.url,
      cluster: "remora-elastic",
      workers: 2,
      active: 1,
      coordinatorArgs: [
        "--window-ms",
        "50",
        "--epoch-ms",
        "500",
        "--autoscale",
        "1..2",
        // Mean outstanding work per active worker: the spike queues seconds of it, an idle pool none.
        "--autoscale-high",
        "200000",
        "--autoscale-low",
        "1000",
        "--autoscale-sustain",
        "2",
        "--autoscale-cooldown-ms",
        "1000",
        "--autoscale-every-ms",
        "250"
      ]
    })
    client = processes.client
    workers = processes.workers
    coordinator = processes.coordinator
  }, 90_000)
  afterAll(() => harness.close())

  it("scales out on a spike and in when it ends, with the reference state and one receipt per transaction", async () => {
    const before = await stateWhen(client, (s) => s.pool.length === 2, 30)
    // The first worker to join took the one slot; the other waits as a spare.
    expect(before.pool.map((m) => m.state).sort()).toEqual(["active", "spare"])
    const spare = before.pool.find((m) => m.state === "spare")!.worker
    expect(before.workers).toEqual(before.pool.filter((m) => m.state === "active").map((m) => m.worker))

    // 1. The spike: 5,000 transactions of 4 ms stateful work each, 300 outstanding at a time: about 5 s of work
    //    for one worker's 4 virtual cores, offered over that time (work committed before a scale-out stays put).
    const spec = {
      kind: "ycsb",
      keys: 500,
      objectsPerTx: 2,
      zipf: 0.6,
      statelessCostUs: 0,
      statefulCostUs: 4_000
    } as const
    const spike = signedWorkload(spec, 5_000, 41, 0, "spike-")
    const spikeReceipts = receiptsOf(await submitAll(client, spike.txs, 300))
    const afterSpike = await client.state.pipe(Effect.runPromise)
    expect(afterSpike.scaleOuts).toBeGreaterThanOrEqual(1)
    const served = new Set(spikeReceipts.map((r) => r.worker))
    expect(served.has(spare)).toBe(true)

    // 2. The drop: nothing offered, so a worker retires and its process stops by itself.
    const retired = await stateWhen(client, (s) => s.scaleIns >= 1 && s.workers.length === 1, 120)
    const gone = workers.find((w) => !retired.workers.includes(idOf(w)))!
    expect(await gone.exited).toBe(0)
    expect(gone.lines.some((l) => l.includes("retired by coordinator"))).toBe(true)

    // 3. More load over the same keys: the remaining worker takes the retired one's objects from the coordinator.
    const after = signedWorkload({ ...spec, statefulCostUs: 0 }, 1_000, 42, 0, "after-")
    const afterReceipts = receiptsOf(await submitAll(client, after.txs, 500))
    expect(new Set(afterReceipts.map((r) => r.worker))).toEqual(new Set(retired.workers))

    const receipts = [...spikeReceipts, ...afterReceipts]
    expect(new Set(receipts.map((r) => r.seq)).size).toBe(receipts.length)
    const state = await completeState(client)
    expect(state.completed).toBe(receipts.length)
    expect(state.stateHash).toBe(referenceHash(receiptOrder(receipts), new Map([...spike.byId, ...after.byId])))

    // The coordinator's account: a scale-out, then a retirement through its phases, and no rollback for either
    // (a graceful retirement is not a crash: nothing is replayed).
    const log = coordinator.lines.filter((l) => l.includes("autoscaler:") || l.includes("recovery after"))
    const said = (text: string) => log.findIndex((l) => l.includes(text))
    expect(said(`scale-out (load-high`)).toBeGreaterThanOrEqual(0)
    expect(said(`${idOf(gone)} retiring`)).toBeGreaterThan(said("scale-out"))
    expect(said("objects of")).toBeGreaterThan(said("retiring"))
    expect(said(") retired (")).toBeGreaterThan(said("objects of"))
    expect(log.filter((l) => l.includes("recovery after"))).toEqual([])
  }, 240_000)
})

/** The actor id a worker process was started with (its command line's --id). */
const idOf = (w: ActorProcess): string => {
  const args = w.child.spawnargs
  return args[args.indexOf("--id") + 1] ?? ""
}
