import { makeKvClient } from "@reef/replica"
import * as Effect from "effect/Effect"

const base = Number(process.argv[2])
const replicas = [1, 2, 3].map((i) => `127.0.0.1:${base + i}`)
await Effect.gen(function* () {
  const c = yield* makeKvClient({ replicas, mode: "colocated" })
  const t0 = performance.now()
  const r = yield* c.set("a", Buffer.from("1"))
  console.log("set took", performance.now() - t0, JSON.stringify(r))
  yield* Effect.sleep("1 second")
  for (let i = 0; i < 3; i++) console.log(JSON.stringify(yield* c.state(i)))
}).pipe(Effect.scoped, Effect.runPromise)
