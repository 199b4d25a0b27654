// Coordinator pipeline cost: admission + plan + dispatch encoding, no NATS (tellWorker counts bytes).
import { CoordinatorDriver, defaultCoordinatorOptions, WindowConsensus } from "@reef/coordinator"
import { bodySource, defaultCoordinatorParams, fakeSigner, Prng, transactionStream } from "@reef/remora"
import { SpanRecorder } from "@reef/remora/shell"
import { StatefulTask, type Transaction } from "@reef/proto"
import { encodeBatch } from "../../actors/kernel/src/messenger.js"

const N = Number(process.argv[2] ?? 200000)
const policy = (process.argv[3] ?? "sfs") as "sfs"
const prng = new Prng(1)
const next = transactionStream(bodySource({ kind: "ycsb", keys: 10_000_000, objectsPerTx: 2, zipf: 0, statelessCostUs: 0, statefulCostUs: 0 }, prng), fakeSigner, prng, 0, "t")
const txs: Array<Transaction> = []
for (let i = 0; i < N; i++) txs.push(next().tx)
let bytes = 0, sent = 0
const consensus = new WindowConsensus({ windowMs: 1, rejectRate: 0, reorderRate: 0, seed: 1 })
const driver = new CoordinatorDriver({ ...defaultCoordinatorOptions("c1", "i", { ...defaultCoordinatorParams, policy, separation: "none" }), maxBlockTxs: 2000 }, {
  tellWorker: (_w, codec, messages) => { if (codec.$type === StatefulTask.$type) { bytes += encodeBatch(codec, messages).length; sent += messages.length } },
  spans: new SpanRecorder(undefined, false), warn: console.log
}, consensus)
driver.setWorkers(["w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8"])
const c0 = process.cpuUsage(); const t0 = performance.now()
for (const tx of txs) driver.submit(tx)
const t1 = performance.now(); const c1 = process.cpuUsage(c0)
console.log("admission", ((c1.user + c1.system) / N).toFixed(2), "us/tx cpu")
const c2 = process.cpuUsage()
driver.proposeBlocks()
await new Promise<void>((resolve) => { const i = setInterval(() => { if (sent >= N) { clearInterval(i); resolve() } }, 1) })
const c3 = process.cpuUsage(c2); const t3 = performance.now()
console.log("propose+plan+commit+dispatch(encode)", ((c3.user + c3.system) / N).toFixed(2), "us/tx cpu", (bytes / N).toFixed(0), "bytes/task", "wall", (t3 - t1).toFixed(0), "ms")
driver.close(); consensus.close(); process.exit(0)
