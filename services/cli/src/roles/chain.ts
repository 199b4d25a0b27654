/**
 * `reef run chain`: an Ira chain primary. Produces blocks from the seeded workload, executes each with the
 * hint recorder, commits it to its LMDB store and publishes block and hint on JetStream. `reef up --with ira`
 * starts one (`p1`) with a backup following it.
 */
import * as Effect from "effect/Effect"
import { Opt } from "../cli/spec.js"
import { defineRole } from "./role.js"

export const chainRole = defineRole({
  role: "chain",
  summary: "Ira chain primary: executes blocks and publishes each with its hint on JetStream",
  description:
    "Generates blocks from a seeded workload calibrated to Ethereum's access patterns (tokens, an AMM whose route " +
    "is read from state, linked-list mints, lending), executes them against a reth-shaped LMDB store with the " +
    "hint recorder attached, commits each block, then publishes the block and its hint (the keys it touched, " +
    "with their cheapest source, zstd-compressed) on the chain's JetStream streams, whose sequence is the block " +
    "number. A restarted primary continues from its store and republishes what the streams lack.",
  options: {
    chain: Opt.token({ description: "chain name: its streams and info bucket are named after it", default: "ira" }),
    db: Opt.text({
      description: "directory of the primary's store (created with the genesis if empty)",
      defaultText: ".reef/ira/<cluster>-<chain>-<id>"
    }),
    scale: Opt.choice({
      description: "genesis size of a new store (test ~10 MB, quick ~0.6 GB, full several GB)",
      choices: ["test", "quick", "full"],
      default: "test"
    }),
    seed: Opt.integer({ description: "genesis seed", default: 1, min: 0 }),
    "workload-seed": Opt.integer({
      description: "workload seed (block n's transactions are a function of it and n)",
      default: 7,
      min: 0
    }),
    "block-ms": Opt.integer({ description: "a block every this many ms (0: back to back)", default: 500, min: 0 }),
    "txs-per-block": Opt.integer({ description: "median transactions per block", default: 60, min: 1, max: 4000 }),
    "max-blocks": Opt.integer({ description: "stop producing at this block", defaultText: "never", min: 1 })
  },
  examples: [
    "reef run chain --id p1",
    "reef run chain --id p1 --scale quick --block-ms 0 --txs-per-block 230   # the calibrated workload, flat out"
  ],
  start: (input, context) =>
    Effect.gen(function* () {
      const { defaultWorkload, runChain } = yield* Effect.promise(() => import("@reef/chain"))
      const dbPath = input.db ?? `.reef/ira/${context.cluster}-${input.chain}-${context.id}`
      const handle = yield* runChain({
        id: context.id,
        natsUrl: context.natsUrl,
        chain: input.chain,
        dbPath,
        scale: input.scale,
        seed: input.seed,
        workload: { ...defaultWorkload(input["workload-seed"]), txsMedian: input["txs-per-block"] },
        blockIntervalMs: input["block-ms"],
        ...(input["max-blocks"] === undefined ? {} : { maxBlocks: input["max-blocks"] })
      })
      return { description: `chain ${context.id} of ${input.chain} at block ${handle.head()} store ${dbPath}` }
    }),
  up: {
    byDefault: false,
    options: {
      "chain-block-ms": Opt.integer({ description: "ira: the primary's block interval in ms", default: 500, min: 0 })
    },
    plan: (input) => [{ role: "chain", id: "p1", args: ["--block-ms", String(input["chain-block-ms"])] }]
  }
})
