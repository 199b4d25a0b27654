/** `reef run counter`: the kernel's demo counter actor. `reef up` starts `--counters` of them (c1, c2, ...). */
import * as Effect from "effect/Effect"
import { Opt } from "../cli/spec.js"
import { defineRole } from "./role.js"

export const counterRole = defineRole({
  role: "counter",
  summary: "demo counter actor: exercises tell, ask, batches and supervision",
  description:
    "A small real actor that keeps counters by key. The demo workload of `reef up --workload` and `pnpm bench kernel` " +
    "drive it; `reef ping counter/c1` reaches it through the gateway.",
  options: {},
  examples: ["reef run counter --id c9"],
  start: (_input, context) =>
    Effect.gen(function* () {
      const { counterActor, spawn } = yield* Effect.promise(() => import("@reef/kernel"))
      yield* spawn(counterActor, context.id)
      return { description: `counter ${context.id}` }
    }),
  up: {
    byDefault: true,
    options: {
      counters: Opt.integer({ description: "counter actors to start (c1, c2, ...)", default: 2, min: 0, max: 64 })
    },
    plan: (input) => Array.from({ length: input.counters }, (_, i) => ({ role: "counter", id: `c${i + 1}`, args: [] }))
  }
})
