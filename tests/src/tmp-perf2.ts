import { CoordinatorDriver, defaultCoordinatorOptions, WindowConsensus } from "@reef/coordinator"
import { bodySource, defaultCoordinatorParams, fakeSigner, Prng, transactionStream, admit } from "@reef/remora"
import { SpanRecorder } from "@reef/remora/shell"
import { StatefulTask, type Transaction } from "@reef/proto"
import { encodeBatch } from "../../actors/kernel/src/messenger.js"

const N = Number(process.argv[2] ?? 200000)
const policy = (process.argv[3] ?? "sfs") as "sfs"
const encode = process.argv[4] !== "noencode"
const prng = new Prng(1)
const next = transactionStream(bodySource({ kind: "ycsb", keys: 10_000_000, objectsPerTx: 2, zipf: 0, statelessCostUs: 0, statefulCostUs: 0 }, prng), fakeSigner, prng, 0, "t")
const txs: Array<Transaction> = []
for (let i = 0; i < N; i++) txs.push(next().tx)
// admission alone
{ const c0 = process.cpuUsage(); for (let i = 0; i < 50000; i++) admit(txs[i]!); const c = process.cpuUsage(c0); console.log("admit() alone", ((c.user + c.system) / 50000).toFixed(2), "us/tx") }
let sent = 0, bytes = 0
const consensus = new WindowConsensus({ windowMs: 1, rejectRate: 0, reorderRate: 0, seed: 1 })
const driver = new CoordinatorDriver({ ...defaultCoordinatorOptions("c1", "i", { ...defaultCoordinatorParams, policy, separation: "none" }), maxBlockTxs: 2000, blockIntervalMs: 1e9 }, {
  tellWorker: (_w, codec, messages) => { if (codec.$type === StatefulTask.$type) { if (encode) bytes += encodeBatch(codec, messages).length; sent += messages.length } },
  spans: new SpanRecorder(undefined, false), warn: console.log
}, consensus)
driver.setWorkers(["w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8"])
{ const c0 = process.cpuUsage(); for (const tx of txs) driver.submit(tx); const c = process.cpuUsage(c0); console.log("submit", ((c.user + c.system) / N).toFixed(2), "us/tx") }
global.gc?.()
const c2 = process.cpuUsage(); const t2 = performance.now()
if (process.env.PROF) { const { Session } = await import("node:inspector/promises"); (globalThis as any).s = new Session(); (globalThis as any).s.connect(); await (globalThis as any).s.post("Profiler.enable"); await (globalThis as any).s.post("Profiler.start") }
driver.proposeBlocks()
await new Promise<void>((resolve) => { const i = setInterval(() => { if (sent >= N) { clearInterval(i); resolve() } }, 1) })
const c3 = process.cpuUsage(c2)
if (process.env.PROF) { const { profile } = await (globalThis as any).s.post("Profiler.stop"); (await import("node:fs")).mkdirSync("/tmp/remora-prof", { recursive: true }); (await import("node:fs")).writeFileSync("/tmp/remora-prof/p.cpuprofile", JSON.stringify(profile)) }
console.log(policy, encode ? "with encode" : "no encode", ((c3.user + c3.system) / N).toFixed(2), "us/tx", "wall", (performance.now() - t2).toFixed(0))
process.exit(0)
