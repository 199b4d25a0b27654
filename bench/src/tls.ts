/**
 * `pnpm bench tls [--quick]`: what `reef up --secure` costs. KV SET throughput of a 3-replica POPUC group with
 * authentication and TLS on (nkey identities and permissions on NATS over mutual TLS, gRPC over TLS with a
 * bearer token; the clients too) over the same group without, measured the same way: a fresh group per
 * measurement, the same load from this process (128 requests in flight over framed sessions, colocated),
 * warm-up then a timed run, the two taking turns (A B A B) in interleaved rounds, median and min–max.
 */
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { writeClusterCredentials, writeLocalCa } from "@reef/devkit"
import { grpcSecurityEnv } from "@reef/grpc"
import { natsSecurityEnv, startNatsServer } from "@reef/kernel"
import * as Effect from "effect/Effect"
import { figureOf, interleave, machineNow, ratioOf, readMachine, writeResult } from "./harness/index.js"
import { runKvLoad } from "./kv-load.js"
import { BENCH_CLUSTER, startGroup } from "./popuc-group.js"

const REPLICAS = 3
const IN_FLIGHT = 128
const WARM_UP_MS = 1_500

interface Run {
  readonly setsPerSec: number
  readonly p50Ms: number
  readonly errors: number
}

/** The environment of a secured run (every process's, this one's clients included) and the server's options. */
const securedSetup = () => {
  const dir = mkdtempSync(join(tmpdir(), "reef-bench-tls-"))
  const ca = writeLocalCa(join(dir, "tls"))
  const credentials = writeClusterCredentials(join(dir, "nats"), BENCH_CLUSTER)
  const tls = { caFile: ca.caFile, certFile: ca.certFile, keyFile: ca.keyFile }
  return {
    dir,
    server: { config: credentials.serverConfig, tls: { ...tls, verify: true } },
    env: {
      ...natsSecurityEnv({ ...credentials.securityOf("replica"), tls }),
      ...grpcSecurityEnv({ tls, token: randomBytes(24).toString("base64url") })
    }
  }
}

/** One measurement: a fresh nats-server and group (secured or not), warm-up, then `durationMs` of SETs. */
const measure = (secure: boolean, durationMs: number) =>
  Effect.gen(function* () {
    const setup = secure ? securedSetup() : undefined
    // Children inherit this process's environment, and this process's KV clients read it.
    const keys = Object.keys(setup?.env ?? {})
    yield* Effect.acquireRelease(
      Effect.sync(() => Object.assign(process.env, setup?.env ?? {})),
      () =>
        Effect.sync(() => {
          for (const k of keys) delete process.env[k]
          if (setup !== undefined) rmSync(setup.dir, { recursive: true, force: true })
        })
    )
    const nats = yield* startNatsServer({ jetstream: false, ...(setup?.server ?? {}) })
    const group = yield* startGroup(nats.url, REPLICAS, "kv", ["--interaction-ms", "30"])
    const load = (ms: number) =>
      runKvLoad({ addresses: group.addresses, mode: "colocated", op: "set", concurrency: IN_FLIGHT, durationMs: ms })
    yield* load(WARM_UP_MS)
    const result = yield* load(durationMs)
    return { setsPerSec: result.throughputPerSec, p50Ms: result.p50Ms, errors: result.errors } satisfies Run
  }).pipe(Effect.scoped)

export const run = async (quick: boolean): Promise<void> => {
  const start = readMachine()
  const durationMs = quick ? 3_000 : 6_000
  const rounds = await interleave(
    { quick, label: "KV SET, secure vs plain" },
    {
      secure: () => Effect.runPromise(measure(true, durationMs)),
      plain: () => Effect.runPromise(measure(false, durationMs))
    }
  )
  for (const r of rounds) {
    console.log(
      `  round: secure ${r.values.secure.setsPerSec.toFixed(0)}/s (p50 ${r.values.secure.p50Ms} ms), plain ${r.values.plain.setsPerSec.toFixed(0)}/s (p50 ${r.values.plain.p50Ms} ms)`
    )
  }
  const conditions = {
    replicas: REPLICAS,
    inFlight: IN_FLIGHT,
    mode: "colocated, framed sessions",
    valueBytes: 256,
    warmUpMs: WARM_UP_MS,
    durationMs,
    interactionMs: 30,
    durability: "none (in memory on every side)"
  }
  const ratio = ratioOf(
    {
      numerator: "KV SET with authentication and TLS on (NATS mutual TLS + nkeys, gRPC TLS + token) (/s)",
      denominator: "KV SET with neither, same group and load (/s)",
      conditions
    },
    rounds,
    (v) => v.secure.setsPerSec,
    (v) => v.plain.setsPerSec
  )
  console.log(
    `KV SET secure / plain: median ${ratio.median.toFixed(3)} (min ${ratio.min.toFixed(3)}, max ${ratio.max.toFixed(3)})`
  )
  await writeResult({
    suite: "tls",
    quick,
    command: `pnpm bench tls${quick ? " --quick" : ""}`,
    machine: machineNow(start),
    ratios: { kvSetSecureOverPlain: ratio },
    metrics: {
      secureSetsPerSec: figureOf(rounds, (v) => v.secure.setsPerSec),
      plainSetsPerSec: figureOf(rounds, (v) => v.plain.setsPerSec),
      secureP50Ms: figureOf(rounds, (v) => v.secure.p50Ms),
      plainP50Ms: figureOf(rounds, (v) => v.plain.p50Ms),
      errors: rounds.reduce((n, r) => n + r.values.secure.errors + r.values.plain.errors, 0)
    }
  })
}
