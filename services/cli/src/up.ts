/**
 * `reef up`: a whole local cluster. Starts nats-server (embedded, unless --nats is given), then one
 * `reef run` process per actor (the gateway and every role), waits until every actor is seen in the
 * membership view, prints the actor table, and either runs the demo workload and shuts down (--workload)
 * or stays up until Ctrl-C.
 */
import { startReefChild, stopTogetherOnClose } from "@reef/devkit"
import { freePort, isJoined, Membership, natsKernelLayer, startNatsServer } from "@reef/kernel"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { clusterPlan } from "./cluster-plan.js"
import { kvWorkload } from "./kv-workload.js"
import { printMembers } from "./status.js"
import { formatTable } from "./table.js"
import { kernelWorkload } from "./workload.js"

export interface UpOptions {
  readonly natsUrl: Option.Option<string>
  readonly cluster: string
  readonly grpcPort: number
  readonly counters: number
  readonly replicas: number
  readonly workload: boolean
}

export const runUp = (options: UpOptions) =>
  Effect.gen(function* () {
    const natsUrl = Option.isSome(options.natsUrl)
      ? options.natsUrl.value
      : (yield* startNatsServer({ jetstream: true })).url
    yield* Effect.log(`nats-server at ${natsUrl}${Option.isSome(options.natsUrl) ? "" : " (embedded)"}`)

    const kvPorts = yield* Effect.forEach(Array.from({ length: options.replicas }), () => freePort)
    const plan = clusterPlan({ counters: options.counters, replicas: options.replicas, kvPorts })
    const common = ["--nats", natsUrl, "--cluster", options.cluster, "--grpc-port", String(options.grpcPort)]
    const children = yield* Effect.forEach(
      plan,
      (actor) =>
        startReefChild({
          name: `${actor.role}/${actor.id}`,
          args: ["run", actor.role, "--id", actor.id, ...common, ...actor.args],
          // A replica calibrates its round timer with its peers before it is ready.
          startTimeoutMs: 60_000
        }),
      { concurrency: "unbounded" }
    )
    yield* stopTogetherOnClose(children)

    const program = Effect.gen(function* () {
      const membership = yield* Membership
      const members = yield* membership
        .awaitMembers((ms) =>
          plan.every((a) => ms.some((m) => isJoined(m) && m.address?.role === a.role && m.address.id === a.id))
        )
        .pipe(Effect.timeout("30 seconds"))
      const kv = kvPorts.map((p) => `127.0.0.1:${p}`)
      yield* Effect.sync(() =>
        console.log(
          `\nReef cluster "${options.cluster}" is up (gateway on 127.0.0.1:${options.grpcPort}` +
            `${kv.length > 0 ? `, POPUC KV group "kv" on ${kv.join(", ")}` : ""})\n`
        )
      )
      yield* printMembers(members)
      if (!options.workload) {
        yield* Effect.sync(() => console.log("\nCtrl-C to stop. `pnpm reef status` prints this table again."))
        return yield* Effect.never
      }
      const counters = plan
        .filter((a) => a.role === "counter")
        .map((a) => ({ cluster: options.cluster, role: a.role, id: a.id }))
      const kernel = yield* kernelWorkload(counters).pipe(
        Effect.timeoutFail({ duration: "30 seconds", onTimeout: () => new Error("kernel workload: no result in 30 s") })
      )
      const kvResult =
        kv.length > 0
          ? yield* kvWorkload(kv, { sets: 2_000, inFlight: 128, partTimeoutSeconds: 45 })
          : { rows: [], ok: true }
      const result = { rows: [...kernel.rows, ...kvResult.rows], ok: kernel.ok && kvResult.ok }
      yield* Effect.sync(() =>
        console.log(
          `\nWorkload results\n${formatTable(
            ["part", "ops", "seconds", "ops/s", "p50 ms", "p99 ms", "check"],
            result.rows.map((r) => [
              r.part,
              r.operations,
              r.seconds === 0 ? "" : r.seconds.toFixed(3),
              r.perSecond === 0 ? "" : Math.round(r.perSecond),
              r.p50Ms?.toFixed(2) ?? "",
              r.p99Ms?.toFixed(2) ?? "",
              r.check
            ])
          )}\n`
        )
      )
      if (!result.ok) return yield* Effect.fail(new Error("workload check failed"))
    })
    yield* program.pipe(
      Effect.provide(natsKernelLayer({ servers: natsUrl, name: "reef-up" }, { cluster: options.cluster }))
    )
  }).pipe(Effect.scoped)
