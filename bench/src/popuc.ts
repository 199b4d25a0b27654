/**
 * Suite `popuc`: the POPUC replicated KV against etcd (same N, loopback, etcd's Go client, --unsafe-no-fsync
 * since POPUC keeps state in memory) and an unreplicated Redis, all in the same run on this machine. Reef and
 * etcd run in interleaved rounds (harness: 3, 2 with --quick), each round on fresh clusters warmed alike, and
 * every ratio is the median and min–max over the rounds.
 *
 *   sizes      per N: Reef Set/Get throughput and latency (each deployment mode in a full run) at 128 in
 *              flight, engine rounds and round times; etcd PUT/GET at the same N and concurrency; over the
 *              Reef colocated Set and etcd PUT windows, CPU and peer bytes per committed write per replica
 *              (popuc/cost.ts, `metrics.costPerWrite`)
 *   saturation N = 5 with 1,024 writes in flight on both
 *   failover   N = 5 under load from clients on every member, one killed (Reef: a replica; etcd: the leader,
 *              default raft timing and tuned to loopback scale): the longest completion gap after the kill
 *   timed      N = 5 with the paper's timed rounds (`--round-close timer`) next to the default, rounds closed
 *              once every peer is heard from, in interleaved rounds of their own
 *   stalls     N = 3 under load while every replica process is paused (SIGSTOP) for 60 ms every 400 ms
 *   rejoin     N = 3 under load, one replica killed (kill -9) and started again: restart to serving, restart
 *              to caught up
 *
 * One file per scenario in popuc/, the shared plan in popuc/plan.ts, the report in popuc/report.ts.
 */
import { freePort, startNatsServer } from "@reef/kernel"
import * as Effect from "effect/Effect"
import { interleave, readMachine } from "./harness/index.js"
import { makePhases } from "./phases.js"
import { reefSizesRound } from "./popuc/group-sizes.js"
import { ensureEtcdLoad, etcdRound, measureRedis } from "./popuc/peers.js"
import { planFor } from "./popuc/plan.js"
import { measureRejoin } from "./popuc/rejoin.js"
import { reportPopuc } from "./popuc/report.js"
import { roundCloseRun } from "./popuc/round-close.js"
import { stallWholeGroup } from "./popuc/stalls.js"

export const run = async (quick: boolean, flags: ReadonlyArray<string> = []) => {
  // Across hosts (issue 29): its own module, writing its own section of popuc.json.
  if (flags.includes("--hosts")) return (await import("./hosts/popuc-hosts.js")).runAcrossHosts(quick, flags)
  const plan = planFor(quick)
  const started = readMachine()
  const { phase, done } = makePhases("bench popuc", 5)
  await ensureEtcdLoad()
  const results = await Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        // Monitoring on: the cost windows read each engine connection's bytes from /connz.
        const nats = yield* startNatsServer({ jetstream: false, monitorPort: yield* freePort })
        const natsProbe = { monitorUrl: nats.monitorUrl!, pid: yield* nats.pid }
        const sizes = yield* phase(
          "group sizes, saturation and failover: Reef and etcd in interleaved rounds",
          Effect.promise(() =>
            interleave(
              { quick, label: "popuc sizes" },
              {
                reef: (r) => Effect.runPromise(reefSizesRound(plan, nats.url, natsProbe, r)),
                etcd: () => etcdRound(plan)
              }
            )
          )
        )
        const redis = yield* phase(
          "Redis reference",
          Effect.promise(() => measureRedis(plan, quick))
        )
        const timed = yield* phase(
          "timed rounds against rounds closed on all heard, interleaved",
          Effect.promise(() =>
            interleave(
              { quick, label: "popuc round close" },
              {
                timer: (r) => Effect.runPromise(roundCloseRun(plan, nats.url, "timer", r)),
                allHeard: (r) => Effect.runPromise(roundCloseRun(plan, nats.url, "allHeard", r))
              }
            )
          )
        )
        const stalls = yield* phase("whole-group stalls", stallWholeGroup(plan, nats.url))
        const rejoin = yield* phase("rejoin after kill -9", measureRejoin(plan, nats.url))
        return { sizes, redis, timed, stalls, rejoin }
      })
    )
  )
  done()
  await reportPopuc(plan, quick, started, results)
}
