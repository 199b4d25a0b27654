/**
 * Fig. 12 of the paper: the coordinator's serial modules alone, in this process, on the pure cores:
 * version assignment (interning a batch's keys, then AssignVersions with a round-robin placement, which costs
 * nothing) and SFS scheduling (interning, the dependency graph's subgraphs, Alg. 1's placement and the version
 * walk), in transactions per second against batch size and objects per transaction. Keys are uniform over the
 * YCSB keyspace, as in the paper's sensitivity analysis.
 */
import {
  KeyIndex,
  type KeyIndex as KeyIndexType,
  keyedBlock,
  ObjectTable,
  PlannerScratch,
  type PolicyName,
  Prng,
  planBlock,
  type TxMeta,
  WorkerRegistry
} from "@reef/remora/core"

export interface CorePoint {
  readonly module: "version-assignment" | "sfs"
  readonly batch: number
  readonly objectsPerTx: number
  readonly tps: number
}

const block = (prng: Prng, batch: number, objects: number, keyspace: number, first: number): Array<TxMeta> =>
  Array.from({ length: batch }, (_, t) => {
    const picked = new Set<number>()
    while (picked.size < objects) picked.add(prng.below(keyspace))
    const keys = [...picked].map((k) => `user${k}`).sort()
    return {
      id: `t${first + t}`,
      keys,
      writes: new Uint8Array(Math.ceil(objects / 8)).fill(0xff),
      statelessCostUs: 0,
      statefulCostUs: 0,
      payload: undefined
    }
  })

/** Transactions per CPU-second (the wall clock would measure the machine's other tenants) of one module over `total` transactions in batches of `batch`. */
const measure = (policy: PolicyName, batch: number, objects: number, total: number, workers: number): number => {
  const prng = new Prng(batch * 131 + objects)
  const blocks = Array.from({ length: Math.max(2, Math.ceil(total / batch)) }, (_, i) =>
    block(prng, batch, objects, 10_000_000, i * batch)
  )
  const registry = new WorkerRegistry()
  const codes = Array.from({ length: workers }, (_, i) => registry.codeOf(`w${i + 1}`))
  const run = (keys: KeyIndexType, table: ObjectTable, scratch: PlannerScratch, list: ReadonlyArray<Array<TxMeta>>) => {
    const cursor = { roundRobin: 0 }
    for (const [i, txs] of list.entries()) {
      const keyed = keyedBlock(txs, keys)
      planBlock(
        i,
        txs,
        keyed,
        keys.size,
        table,
        { codes, load: new Float64Array(workers + 1) },
        cursor,
        prng,
        { policy, genesisAtWorkers: true },
        scratch
      )
    }
  }
  // Warm-up on the first blocks, then timed on all of them with fresh metadata.
  run(new KeyIndex(), new ObjectTable(), new PlannerScratch(), blocks.slice(0, 2))
  const cpu = process.cpuUsage()
  run(new KeyIndex(), new ObjectTable(), new PlannerScratch(), blocks)
  const used = process.cpuUsage(cpu)
  const seconds = (used.user + used.system) / 1e6
  return (blocks.length * batch) / seconds
}

export const coreSweep = (quick: boolean): Array<CorePoint> => {
  const total = quick ? 10_000 : 20_000
  const batches = quick ? [100, 2000] : [100, 1000, 5000]
  const objects = quick ? [2, 5] : [1, 2, 5, 10]
  const points: Array<CorePoint> = []
  for (const module of ["version-assignment", "sfs"] as const) {
    for (const b of batches) {
      for (const k of objects) {
        const policy: PolicyName = module === "sfs" ? "sfs" : "round-robin"
        points.push({ module, batch: b, objectsPerTx: k, tps: Math.round(measure(policy, b, k, total, 8)) })
      }
    }
  }
  return points
}
