/**
 * A coordinator and three workers over a real nats-server, in this process: signed transactions (some with bad
 * signatures) go in through the driver, and the executed state equals the sequential reference executor's over
 * the committed order. The window source is scripted so that the first blocks are reordered and rejected
 * whatever the machine's timing: plans made during the window are both adopted and recomputed.
 */
import { committedOrder, referenceHash, signedWorkload, windowConsensusLayer } from "@reef/coordinator"
import { startNatsServer } from "@reef/kernel"
import { StateDigestSum } from "@reef/remora"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeHarness } from "./harness.js"
import { type InProcessCluster, startInProcessCluster } from "./remora-harness.js"

const harness = makeHarness()
let cluster: InProcessCluster
const BLOCK = 100

beforeAll(async () => {
  const nats = await harness.run(startNatsServer({ jetstream: false }))
  cluster = await startInProcessCluster({
    natsUrl: nats.url,
    cluster: "remora-inproc",
    coordinator: { id: "c1", params: { policy: "sfs" }, maxBlockTxs: BLOCK },
    consensus: windowConsensusLayer({
      windowMs: 50,
      reorderRate: 0.2,
      rejectRate: 0.1,
      seed: 7,
      // Proposals 1-3 are made in one turn (below): 2 commits before 1 (its plan is recomputed), 3 is rejected.
      script: ["reorder", "commit", "reject"]
    }),
    workers: ["w1", "w2", "w3"].map((id) => ({ id, cores: 2 }))
  })
}, 60_000)

afterAll(async () => {
  await cluster?.close()
  await harness.close()
})

describe("Remora over NATS (in-process actors)", () => {
  it("executes signed YCSB transactions with the reference executor's final state", async () => {
    const driver = cluster.coordinator.driver
    while (driver.workers.length < 3) await new Promise((r) => setTimeout(r, 50))
    const workload = signedWorkload(
      { kind: "ycsb", keys: 200, objectsPerTx: 3, zipf: 0.9, statelessCostUs: 0, statefulCostUs: 0 },
      2000,
      11,
      0.05
    )
    const receipts: Array<unknown> = []
    const submit = (from: number, to: number) => {
      for (const tx of workload.txs.slice(from, to)) {
        const outcome = driver.submit(tx, (r) => receipts.push(r))
        expect(outcome.accepted).toBe(true)
      }
    }
    // Three full blocks in one turn: proposed together, so the script's reordering has a next decision.
    submit(0, 3 * BLOCK)
    // The rest over a few dozen blocks, so plans are made during windows.
    for (let i = 3 * BLOCK; i < workload.txs.length; i += BLOCK) {
      await new Promise((r) => setTimeout(r, 10))
      submit(i, i + BLOCK)
    }
    const deadline = Date.now() + 60_000
    while (receipts.length < workload.txs.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    expect(receipts.length).toBe(workload.txs.length)
    const order = committedOrder(cluster.commits)
    expect(order.length).toBe(workload.txs.length)
    const sum = new StateDigestSum()
    for (const w of cluster.workers) sum.merge(w.driver()!.digest())
    expect(sum.hex()).toBe(referenceHash(order, workload.byId))
    const stats = driver.core.stats
    expect(stats.plansAdopted).toBeGreaterThan(0)
    expect(stats.plansRecomputed).toBeGreaterThan(0)
    expect(stats.rejected).toBeGreaterThan(0)
  }, 120_000)
})
