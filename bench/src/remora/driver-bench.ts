/**
 * Fig. 11's dispatch path without the network: the coordinator's driver (mempool, core, wire encoding of every
 * task) in this process, its batched tells encoded as the kernel does (encodeBatch) but not published, consensus decided by hand. Set against
 * the same burst over NATS (experiment.ts), it says what the messaging costs. Best of a few bursts, per
 * CPU-second, after a warm-up burst (a cold JIT is not the coordinator's rate).
 */
import { CoordinatorDriver, type Decision, defaultCoordinatorOptions } from "@reef/coordinator"
import { type Codec, encodeBatch } from "@reef/kernel"
import type { Transaction } from "@reef/proto"
import {
  bodySource,
  defaultCoordinatorParams,
  ed25519Signer,
  type PolicyName,
  Prng,
  type Separation,
  signingKeyFromSeed,
  transactionStream
} from "@reef/remora"
import { SpanRecorder } from "@reef/remora/shell"
import { round } from "../report.js"

export interface DriverPoint {
  readonly policy: PolicyName
  readonly separation: Separation
  readonly admissionUsPerTx: number
  readonly proposeUsPerTx: number
  readonly commitUsPerTx: number
  readonly dispatchTps: number
}

const cpuUs = () => {
  const c = process.cpuUsage()
  return c.user + c.system
}

const WORKERS = ["w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8"]

export const driverSweep = (
  modes: ReadonlyArray<{ readonly policy: PolicyName; readonly separation: Separation }>,
  burst: number,
  repetitions: number
): Array<DriverPoint> => {
  const prng = new Prng(42)
  const next = transactionStream(
    bodySource(
      { kind: "ycsb", keys: 10_000_000, objectsPerTx: 2, zipf: 0, statelessCostUs: 0, statefulCostUs: 0 },
      prng.fork()
    ),
    ed25519Signer(signingKeyFromSeed(new Uint8Array(32).fill(7))),
    prng,
    0,
    "d"
  )
  const txs: Array<Transaction> = Array.from({ length: burst * (repetitions + 1) }, () => next().tx)
  return modes.map(({ policy, separation }) => {
    let best = { admit: Number.POSITIVE_INFINITY, propose: Number.POSITIVE_INFINITY, commit: Number.POSITIVE_INFINITY }
    for (let r = 0; r <= repetitions; r++) {
      let decide: (d: Decision) => void = () => {}
      const driver = new CoordinatorDriver(
        {
          ...defaultCoordinatorOptions("c", "bench", { ...defaultCoordinatorParams, policy, separation }),
          blockIntervalMs: 3_600_000
        },
        {
          tellWorker: <A>(_worker: string, codec: Codec<A>, messages: ReadonlyArray<A>) => {
            encodeBatch(codec, messages)
          },
          spans: new SpanRecorder(undefined, false),
          warn: () => {},
          info: () => {}
        },
        {
          name: "by hand",
          description: "decided by the benchmark",
          listen: (f) => {
            decide = f
          },
          propose: () => {}
        }
      )
      driver.setWorkers(WORKERS.map((id) => ({ id, incarnation: "1" })))
      let t = cpuUs()
      for (const tx of txs.slice(r * burst, (r + 1) * burst)) driver.submit(tx)
      const admit = (cpuUs() - t) / burst
      t = cpuUs()
      driver.proposeBlocks()
      const propose = (cpuUs() - t) / burst
      const proposals = driver.core.pending.map((p) => p.block.proposal)
      t = cpuUs()
      for (const proposal of proposals) decide({ _tag: "Commit", proposal })
      const commit = (cpuUs() - t) / burst
      driver.close()
      if (driver.core.stats.dispatched !== burst)
        throw new Error(`driver bench: ${driver.core.stats.dispatched} of ${burst} dispatched`)
      // The first burst warms the JIT up.
      if (r > 0 && propose + commit < best.propose + best.commit) best = { admit, propose, commit }
    }
    return {
      policy,
      separation,
      admissionUsPerTx: round(best.admit, 2),
      proposeUsPerTx: round(best.propose, 2),
      commitUsPerTx: round(best.commit, 2),
      dispatchTps: Math.round(1e6 / (best.propose + best.commit))
    }
  })
}
