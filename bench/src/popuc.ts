/**
 * Suite `popuc`: the POPUC replicated KV against etcd (same N, loopback, Go client, --unsafe-no-fsync since
 * POPUC keeps state in memory) and an unreplicated Redis, all in the same run on this machine.
 *
 *   engine     instances/s, rounds and ms per instance, round-time p50/p99/max (no failures), per N
 *   kv         Set/Get throughput and p50/p99 for N = 3, 5, 7, 9 in each deployment mode (128 in flight)
 *   saturation N = 5 Set throughput with 1,024 writes in flight, next to etcd's PUT with as many: their peak
 *              rates, at a load both are CPU-bound at
 *   timed      N = 5 with the paper's timed rounds (`--round-close timer`) next to the default, rounds closed
 *              once every peer is heard from: Set throughput at 128 in flight, and one client's write latency
 *   peers      etcd PUT/GET per N (same concurrency), Redis SET/GET
 *   failover   kill one replica of 5 under load (and again with 8 writes in flight, where the stall is not
 *              hidden in the saturated machine's gaps): stall and throughput before/after, and how many
 *              survivors found the victim's connection gone; the same with etcd's leader
 *   stalls     N = 3 under load while every replica process is paused (SIGSTOP) for 60 ms every 400 ms, the
 *              way a shared machine or a VM stalls a whole group at once: self-quits and throughput
 *   rejoin     N = 3 under load, one replica killed (kill -9) and started again: restart to serving, restart
 *              to caught up (rejoinServingMs, rejoinCaughtUpMs)
 *
 * One file per scenario in popuc/ (group-sizes, failover, round-close, stalls, rejoin, peers), the shared plan
 * in popuc/plan.ts, the report in popuc/report.ts.
 *
 * Writes bench/results/popuc.json and bench/results/popuc.svg (throughput vs N per system).
 */
import { startNatsServer } from "@reef/kernel"
import * as Effect from "effect/Effect"
import { makePhases } from "./phases.js"
import { failoverLight } from "./popuc/failover.js"
import { measureGroupSizes } from "./popuc/group-sizes.js"
import { measurePeers } from "./popuc/peers.js"
import { planFor } from "./popuc/plan.js"
import { measureRejoin } from "./popuc/rejoin.js"
import { reportPopuc } from "./popuc/report.js"
import { compareRoundClose } from "./popuc/round-close.js"
import { stallWholeGroup } from "./popuc/stalls.js"

export const run = async (quick: boolean) => {
  const plan = planFor(quick)
  const { phase, done } = makePhases("bench popuc", 6)
  const reef = await Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const nats = yield* startNatsServer({ jetstream: false })
        const sizes = yield* phase(
          "engine and KV per group size, etcd and Redis alongside",
          measureGroupSizes(plan, nats.url)
        )
        const light = yield* phase("failover: one replica of 5 killed under load", failoverLight(plan, nats.url))
        const timed = yield* phase("timed rounds against rounds closed on all heard", compareRoundClose(plan, nats.url))
        const stalls = yield* phase("whole-group stalls", stallWholeGroup(plan, nats.url))
        const rejoin = yield* phase("rejoin after kill -9", measureRejoin(plan, nats.url))
        return { sizes, failoverLight: light, timed, stalls, rejoin }
      })
    ) as Effect.Effect<Omit<Parameters<typeof reportPopuc>[2], "peers">, unknown>
  )
  const peers = await Effect.runPromise(
    phase(
      "etcd and Redis per group size",
      Effect.promise(() => measurePeers(plan, quick))
    )
  )
  done()
  reportPopuc(plan, quick, { ...reef, peers })
}
