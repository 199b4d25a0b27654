import { admit, bodySource, createCoordinator, defaultCoordinatorParams, fakeSigner, Prng, stepCoordinator, transactionStream, type TxMeta } from "@reef/remora"
import { statefulToWire } from "@reef/remora/shell"
import { StatefulTask, type Transaction } from "@reef/proto"
import { encodeBatch } from "../../actors/kernel/src/messenger.js"
const N = 200000, B = 2000
const policy = (process.argv[2] ?? "sfs") as "sfs"
const prng = new Prng(1)
const next = transactionStream(bodySource({ kind: "ycsb", keys: 10_000_000, objectsPerTx: 2, zipf: 0, statelessCostUs: 0, statefulCostUs: 0 }, prng), fakeSigner, prng, 0, "t")
const metas: Array<TxMeta<Transaction>> = []
for (let i = 0; i < N; i++) metas.push((admit(next().tx) as any).meta)
const run = (what: string) => {
  const s = createCoordinator<Transaction>({ ...defaultCoordinatorParams, policy, separation: "none" })
  stepCoordinator(s, { _tag: "Workers", workers: ["w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8"] })
  global.gc?.()
  const c0 = process.cpuUsage()
  let bytes = 0
  for (let p = 0; p < N / B; p++) {
    const txs = metas.slice(p * B, (p + 1) * B)
    stepCoordinator(s, { _tag: "Propose", block: { proposal: p + 1, digest: "", txs } })
    stepCoordinator(s, { _tag: "Plan", proposal: p + 1 })
    const out = stepCoordinator(s, { _tag: "Commit", proposal: p + 1 })
    if (what !== "core") for (const o of out) if (o._tag === "SendStateful") {
      const wire = o.tasks.map((t) => statefulToWire(t, ""))
      if (what === "encode") bytes += encodeBatch(StatefulTask, wire).length
    }
    // complete everything
    const completions = out.flatMap((o) => o._tag === "SendStateful" ? o.tasks.map((t) => ({ seq: t.seq, status: "executed" as const, leaseTransfers: 0, detail: "" })) : [])
    stepCoordinator(s, { _tag: "Report", worker: "w1", completions, statelessDoneUs: 0 })
  }
  const c = process.cpuUsage(c0)
  console.log(policy, what, ((c.user + c.system) / N).toFixed(2), "us/tx")
}
for (const w of (process.argv[3] ?? "core,wire,encode,core,encode").split(",")) run(w)
