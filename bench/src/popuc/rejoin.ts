/**
 * Rejoin: a group of three under load on two of its replicas, the third killed (kill -9) and started again
 * with the same id, a new incarnation that knows nothing. Measured from the restart (the process spawned):
 * - serving: the first KV call the restarted replica answers OK (it answers UNAVAILABLE until it joined the
 *   running group and applied up to the instance it joined at);
 * - caught up: its applied instance reaches the one the group had applied when it was restarted;
 * - where the time goes: its first output line (the runtime and modules loaded) and its ready line.
 * The machine's load average at the restart says whether it was idle.
 */
import { readFileSync } from "node:fs"
import os from "node:os"
import { makeKvClient } from "@reef/replica"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { startGroup } from "../popuc-group.js"
import { round } from "../report.js"
import { type Plan, writesFor } from "./plan.js"

const KILL_AT_MS = 2_000
/** How long the load goes on after the kill: the rejoin is measured while it runs. */
const LOAD_AFTER_KILL_MS = 12_000
/** REEF_BENCH_REJOIN_LINES=1: print the restarted replica's output lines, each with its time since the spawn. */
const SHOW_LINES = process.env.REEF_BENCH_REJOIN_LINES === "1"
/** Polling the restarted replica. */
const POLL_MS = 5

export interface RejoinResult {
  readonly rejoinServingMs: number
  readonly rejoinCaughtUpMs: number
  /**
   * CPU the restarted process used until it served, all threads: on a loaded machine its wall time is mostly
   * waiting for a core, and this is what an idle one would spend.
   */
  readonly cpuToServingMs: number
  /** The restarted process's first output line and its "reef ready" line, from the spawn. */
  readonly firstOutputMs: number
  readonly readyLineMs: number
  /** Instances the group had applied at the restart (what the restarted replica had to catch up on). */
  readonly instancesBehind: number
  readonly snapshotsRestored: number
  /** The load was still running when the restarted replica caught up. */
  readonly caughtUpUnderLoad: boolean
  readonly loadAverage1m: number
  readonly setPerSec: number
  readonly errors: number
}

const since = (t0: number) => round(performance.now() - t0, 0)

/** CPU time a process has used so far, all its threads, in ms (Linux; NaN elsewhere or once it is gone). */
const cpuMs = (pid: number | undefined): number => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    // utime and stime, fields 14 and 15 of stat(5), in clock ticks (USER_HZ, 100 on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return Number.NaN
  }
}

export const measureRejoin = (plan: Plan, natsUrl: string) =>
  Effect.gen(function* () {
    const writes = writesFor(plan)
    const group = yield* startGroup(natsUrl, 3, "rejoin")
    yield* writes(group.addresses, plan.warmUpMs)
    const loadStart = performance.now()
    const load = yield* Effect.fork(writes(group.addresses, KILL_AT_MS + LOAD_AFTER_KILL_MS, { replicas: [0, 1] }))
    yield* Effect.sleep(`${KILL_AT_MS} millis`)
    const victim = group.children[2]!
    yield* Effect.async<void>((resume) => {
      victim.once("exit", () => resume(Effect.void))
      victim.kill("SIGKILL")
    })
    const groupClient = yield* makeKvClient({ replicas: group.addresses.slice(0, 1), transport: "unary" })
    const groupApplied = (yield* groupClient.state(0)).appliedInstance
    const loadAverage1m = round(os.loadavg()[0] ?? 0, 2)

    let firstOutputMs = Number.NaN
    const t0 = performance.now()
    const restarted = yield* group.restart(2, (line) => {
      if (Number.isNaN(firstOutputMs)) firstOutputMs = since(t0)
      if (SHOW_LINES) console.log(`  [rejoin +${since(t0)} ms] ${line}`)
    })
    const readyLineMs = since(t0)
    const client = yield* makeKvClient({ replicas: group.addresses.slice(2), transport: "unary", timeoutMs: 2_000 })
    const poll = <A>(attempt: Effect.Effect<A, unknown>) =>
      attempt.pipe(
        Effect.catchAll(() => Effect.sleep(`${POLL_MS} millis`).pipe(Effect.zipRight(Effect.fail("again" as const)))),
        Effect.retry({ while: (e) => e === "again" })
      )
    const [serving, caughtUp] = yield* Effect.all(
      [
        poll(client.get("rejoin-probe")).pipe(Effect.map(() => ({ ms: since(t0), cpuMs: cpuMs(restarted.pid) }))),
        poll(
          client.state(0).pipe(
            Effect.filterOrFail(
              (s) => s.appliedInstance >= groupApplied,
              () => "behind"
            )
          )
        ).pipe(Effect.map((state) => ({ ms: since(t0), state })))
      ],
      { concurrency: "unbounded" }
    )
    const loaded = yield* Fiber.join(load)
    return {
      rejoinServingMs: serving.ms,
      cpuToServingMs: serving.cpuMs,
      rejoinCaughtUpMs: caughtUp.ms,
      firstOutputMs,
      readyLineMs,
      instancesBehind: groupApplied,
      snapshotsRestored: caughtUp.state.snapshotsRestored,
      caughtUpUnderLoad: t0 - loadStart + caughtUp.ms < KILL_AT_MS + LOAD_AFTER_KILL_MS,
      loadAverage1m,
      setPerSec: round(loaded.throughputPerSec, 0),
      errors: loaded.errors
    } satisfies RejoinResult
  }).pipe(Effect.scoped)
