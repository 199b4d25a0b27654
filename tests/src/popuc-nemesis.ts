/**
 * A nemesis for a POPUC group, in the style of Jepsen and etcd's robustness tests: three real replica
 * processes over a spawned nats-server, concurrent clients on every replica recording a history of random
 * Get/Set/CAS/Delete over a few keys, while faults are injected one at a time:
 *
 *   kill              kill -9 a replica, restart it (a new incarnation)
 *   pause             SIGSTOP a replica, SIGCONT it
 *   snapshot-restart  kill -9 a replica, write more than the peers' decision logs hold, restart it: it must
 *                     rejoin from a snapshot (its StateResponse counts the restore)
 *   nats-restart      kill -9 the nats-server (one of a cluster's), start it again on the same port
 *   partition         (on hosts) cut a replica's host off from the others' servers at the link proxy, heal it
 *   isolate           (on hosts) set a replica's host's link down (clients lose it too), set it up again
 *   flap              (on hosts) cut a replica's host off and heal it 4-8 times, 0.2-1.5 s each way: routes
 *                     that come back only to be cut again, rounds interrupted mid-way
 *
 * The first faults are one of each kind asked for (the first four by default, in a seeded order); then random
 * ones until the time is up (counted from the first fault). By default the group runs over one local
 * nats-server; a `site` (popuc-hosts.test.ts) places it on hosts with a NATS cluster and a link proxy.
 * After each, the nemesis waits until every replica serves and has applied what the others had (a liveness
 * bound, not a performance claim) and records how long that took. At the end every key is read through
 * every replica, the history goes through the linearizability checker (calls that failed UNAVAILABLE or
 * timed out are unknown outcomes), acknowledged writes are checked against the final values, and the
 * replicas' state hashes must converge. The CI test (popuc-nemesis.test.ts) runs it briefly;
 * `pnpm test:nemesis --minutes N` (popuc-nemesis-main.ts) runs it for longer and prints the figures.
 */
import { randomBytes } from "node:crypto"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { writeClusterCredentials, writeLocalCa } from "@reef/devkit"
import { grpcSecurityEnv } from "@reef/grpc"
import { type NatsServerOptions, natsSecurityEnv, startNatsServer } from "@reef/kernel"
import type { StateResponse } from "@reef/proto"
import {
  checkLinearizable,
  formatEntry,
  formatLostWrite,
  type HistoryEntry,
  HistoryRecorder,
  type KvClient,
  type LinearizabilityResult,
  type LostWrite,
  lostWrites,
  makeKvClient
} from "@reef/replica"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { type Harness, makeHarness, startNats } from "./harness.js"
import {
  type Group,
  makeRandomOperations,
  prng,
  type ReplicaPlacement,
  settledGroupHashes,
  startGroup
} from "./popuc-harness.js"

export type FaultKind = "kill" | "pause" | "snapshot-restart" | "nats-restart" | "partition" | "isolate" | "flap"
const FAULT_KINDS: ReadonlyArray<FaultKind> = ["kill", "pause", "snapshot-restart", "nats-restart"]

/** Where the group runs: its nats-server(s), where each replica is placed, and how a host is cut off. */
export interface NemesisSite {
  readonly natsUrl: string
  readonly servers: ReadonlyArray<{
    readonly name: string
    readonly kill: Effect.Effect<void>
    readonly restart: Effect.Effect<void, unknown>
  }>
  readonly placement?: (index: number) => ReplicaPlacement
  /** Cuts replica `index`'s host off, or heals it, in the way of the fault kind (partition, isolate). */
  readonly cutOff?: Partial<
    Record<"partition" | "isolate", (index: number, cut: boolean) => Effect.Effect<void, unknown>>
  >
  /** Called after a heal: resolves once the site's links are whole again (a NATS cluster's routes). */
  readonly healed?: Effect.Effect<void, unknown>
  /** Figures of the site itself (the delay a link proxy added): reset as the clients start, said at the end. */
  readonly measure?: { readonly reset: Effect.Effect<void, unknown>; readonly report: Effect.Effect<string, unknown> }
}

export interface NemesisOptions {
  /** How long to inject faults, in ms; the first four (one of each kind) run whatever it is. */
  readonly faultsMs: number
  readonly seed: number
  /** Concurrent clients, spread over the replicas (6). */
  readonly clients?: number
  /** Keys the clients work on (4). */
  readonly keys?: number
  /** The replicas' decision log bound (--log-bytes): a snapshot-restart writes twice this meanwhile. */
  readonly logBytes?: number
  /** A client call's deadline; a call past it is an unknown outcome (3 s). */
  readonly callTimeoutMs?: number
  /** Progress lines (none by default). */
  readonly say?: (line: string) => void
  /**
   * Authentication and TLS on, as `reef up --secure` runs them: nkey identities and permissions on NATS over
   * mutual TLS, gRPC over TLS with a bearer token (the test process's clients too).
   */
  readonly secure?: boolean
  /** Starts where the group runs (one local nats-server by default). */
  readonly site?: (harness: Harness) => Promise<NemesisSite>
  /** Calibrate ΔI with the peers at bootstrap, as in production, instead of a fixed 30 ms (popuc-harness.ts). */
  readonly calibrate?: boolean
  /** The first faults, one of each in a seeded order (the first four kinds by default); later ones too. */
  readonly faultKinds?: ReadonlyArray<FaultKind>
}

/** How one fault healed. */
export interface Recovery {
  readonly fault: FaultKind
  /** The replica hit (the server's name for a server restart). */
  readonly target: string
  /** A restart: from spawning the new process to its ready line (it serves). */
  readonly servingMs?: number
  /**
   * From the heal (a restart's spawn, SIGCONT, the server back, the link healed) until the replica(s) served a read and had
   * applied every instance the others had applied when the previous poll began.
   */
  readonly caughtUpMs: number
  /** The replica restored a peer's snapshot (its StateResponse.snapshotsRestored). */
  readonly snapshot: boolean
}

export interface NemesisReport {
  readonly seed: number
  readonly elapsedMs: number
  readonly operations: {
    readonly invoked: number
    readonly answered: number
    /** Failed as UNAVAILABLE or DEADLINE_EXCEEDED: may or may not have taken effect. */
    readonly unknown: number
    /** Failed with another status: certainly without effect. */
    readonly failed: number
    /** Failures by gRPC status code. */
    readonly failureCodes: Readonly<Record<string, number>>
  }
  readonly faults: Readonly<Partial<Record<FaultKind, number>>>
  readonly recoveries: ReadonlyArray<Recovery>
  readonly history: ReadonlyArray<HistoryEntry>
  readonly linearizability: LinearizabilityResult
  readonly checkMs: number
  readonly lostWrites: ReadonlyArray<LostWrite>
  readonly states: ReadonlyArray<StateResponse>
  readonly events: ReadonlyArray<string>
}

/** Liveness bound for a fault to heal (a loaded 2-core machine may take long; never a performance claim). */
const RECOVERY_BOUND_MS = 90_000
/** The decision log's bound here: a restart early in a run catches up from it, later ones from a snapshot. */
const DEFAULT_LOG_BYTES = 1024 * 1024
const FILLER_VALUE_BYTES = 8 * 1024

/** A CA, the identities and a token for a secured run, the server's options and the replicas' environment. */
const secureSetup = (cluster: string) => {
  const dir = mkdtempSync(join(tmpdir(), "reef-nemesis-"))
  const ca = writeLocalCa(join(dir, "tls"))
  const credentials = writeClusterCredentials(join(dir, "nats"), cluster)
  const tls = { caFile: ca.caFile, certFile: ca.certFile, keyFile: ca.keyFile }
  const grpc = grpcSecurityEnv({ tls, token: randomBytes(24).toString("base64url") })
  // This process's KV clients read their TLS and token from the environment, as every Reef client does.
  Object.assign(process.env, grpc)
  return {
    server: {
      jetstream: true,
      config: credentials.serverConfig,
      tls: { certFile: ca.certFile, keyFile: ca.keyFile, caFile: ca.caFile, verify: true }
    },
    replicaEnv: { ...natsSecurityEnv({ ...credentials.securityOf("replica"), tls }), ...grpc }
  }
}

/**
 * The safety verdict of a run, as the tests assert it: the history's linearizability (or the minimal window
 * that is not), the acknowledged writes lost, and how many distinct state hashes the replicas ended with.
 */
export const safetyOf = (report: NemesisReport) => {
  const verdict = report.linearizability
  return {
    linearizability: verdict.ok
      ? "linearizable"
      : `${verdict.reason}\n${verdict.minimalWindow.map(formatEntry).join("\n")}`,
    lostWrites: report.lostWrites.map(formatLostWrite),
    stateHashes: new Set(report.states.map((s) => s.stateHash)).size
  }
}

export const runNemesis = async (options: NemesisOptions): Promise<NemesisReport> => {
  const harness = makeHarness()
  try {
    const cluster = `nemesis${options.seed}`
    const secured = options.secure === true ? secureSetup(cluster) : undefined
    const site = await (options.site ?? localSite(secured?.server))(harness)
    const group = await startGroup(harness, {
      n: 3,
      natsUrl: site.natsUrl,
      cluster,
      ...(site.placement === undefined ? {} : { placement: site.placement }),
      ...(options.calibrate === true && { calibrate: true }),
      extraArgs: ["--log-bytes", String(options.logBytes ?? DEFAULT_LOG_BYTES)],
      ...(secured !== undefined && { env: secured.replicaEnv })
    })
    return await Effect.runPromise(Effect.scoped(nemesis(site, group, options)))
  } finally {
    await harness.close()
  }
}

/** One nats-server on this machine's loopback (`server`: with authentication and TLS). */
const localSite =
  (server?: NatsServerOptions) =>
  async (harness: Harness): Promise<NemesisSite> => {
    const nats = await (server === undefined ? startNats(harness) : harness.run(startNatsServer(server)))
    return { natsUrl: nats.url, servers: [{ name: "nats-server", kill: nats.kill, restart: nats.restart }] }
  }

const nemesis = (site: NemesisSite, group: Group, options: NemesisOptions) =>
  Effect.gen(function* () {
    const began = performance.now()
    const random = prng(options.seed)
    const events: Array<string> = []
    const say = (line: string) => {
      const stamped = `${((performance.now() - began) / 1000).toFixed(1)}s ${line}`
      events.push(stamped)
      options.say?.(stamped)
    }
    const between = (lo: number, hi: number) => Math.round(lo + random() * (hi - lo))
    const { ids, addresses } = group
    const timeoutMs = options.callTimeoutMs ?? 3_000
    // Where each replica runs and the round period it settled on (its ΔI, fixed or calibrated).
    for (const id of ids) {
      say(
        `${id}: ${group.processes.get(id)?.lines.find((line) => line.startsWith("reef ready:")) ?? "(no ready line)"}`
      )
    }

    // ---- clients: each on its own replica, recording until told to stop ------------------------------------
    const recorder = new HistoryRecorder()
    const clientCount = options.clients ?? 6
    const operation = makeRandomOperations(recorder, { keys: options.keys ?? 4, prefix: "k", writers: clientCount })
    const counts = { invoked: 0, answered: 0, unknown: 0, failed: 0 }
    const failureCodes: Record<string, number> = {}
    let stopping = false
    const clients = yield* Effect.forEach(Array.from({ length: clientCount }), (_, c) =>
      makeKvClient({ replicas: addresses, mode: "colocated", clientIndex: c % ids.length, timeoutMs })
    )
    const runClient = (c: number) =>
      Effect.gen(function* () {
        const draw = prng(options.seed * 1000 + c)
        // A call with an unknown outcome may still take effect: its process is "crashed" (Jepsen's rule).
        let generation = 0
        while (!stopping) {
          counts.invoked++
          const outcome = yield* operation(clients[c]!, `c${c}.${generation}`, c, draw)
          if (outcome._tag === "Answered") {
            counts.answered++
            continue
          }
          failureCodes[outcome.error.code] = (failureCodes[outcome.error.code] ?? 0) + 1
          if (outcome.ambiguous) {
            counts.unknown++
            generation++
          } else counts.failed++
          yield* Effect.sleep("100 millis")
        }
      })
    if (site.measure !== undefined) yield* site.measure.reset.pipe(Effect.orDie)
    const workload = yield* Effect.fork(
      Effect.forEach(clients, (_, c) => runClient(c), { concurrency: "unbounded", discard: true })
    )

    // ---- observing the group ----------------------------------------------------------------------------------
    const admin = yield* makeKvClient({ replicas: addresses, timeoutMs: 1_000, transport: "unary" })
    const probes = yield* Effect.forEach(ids, (_, i) =>
      makeKvClient({ replicas: addresses, mode: "colocated", clientIndex: i, timeoutMs: 1_000, transport: "unary" })
    )
    const lastLines = (id: string) => (group.processes.get(id)?.lines ?? []).slice(-20).join("\n")
    /**
     * Waits until replica `index` serves a read and has applied what the others had applied as of the
     * previous poll; returns the time since `fromMs`.
     */
    const caughtUp = (index: number, fromMs: number) =>
      Effect.gen(function* () {
        let target: number | undefined
        for (;;) {
          if (performance.now() - fromMs > RECOVERY_BOUND_MS) {
            return yield* Effect.dieMessage(
              `${ids[index]} did not catch up within ${RECOVERY_BOUND_MS} ms; its last output:\n${lastLines(ids[index]!)}`
            )
          }
          const states = yield* Effect.forEach(ids, (_, i) => Effect.either(admin.state(i)), {
            concurrency: "unbounded"
          })
          const self = states[index]!
          if (self._tag === "Right" && target !== undefined && self.right.appliedInstance >= target) {
            const served = yield* Effect.either(probes[index]!.get("k0"))
            if (served._tag === "Right") return performance.now() - fromMs
          }
          const others = states.flatMap((s, i) => (i !== index && s._tag === "Right" ? [s.right.appliedInstance] : []))
          if (others.length > 0) target = Math.max(...others)
          yield* Effect.sleep("50 millis")
        }
      })
    const snapshotsOf = (index: number) =>
      admin.state(index).pipe(
        Effect.map((s) => s.snapshotsRestored),
        Effect.orElseSucceed(() => 0)
      )

    const killReplica = (id: string) =>
      Effect.gen(function* () {
        const process = group.processes.get(id)!
        process.child.kill("SIGKILL")
        yield* Effect.promise(() => process.exited)
      })
    /** Starts `id` again; resolves once its new process serves, with the time that took. */
    const restartReplica = (id: string) =>
      Effect.gen(function* () {
        const spawnedMs = performance.now()
        yield* Effect.tryPromise({
          try: () => group.start(id),
          catch: (cause) => new Error(`restarting ${id}: ${cause instanceof Error ? cause.message : String(cause)}`)
        }).pipe(Effect.orDie)
        return { spawnedMs, servingMs: performance.now() - spawnedMs }
      })
    /** More bytes of decisions than the peers' logs hold, through the replicas other than `victim`. */
    const overflowLogs = (victim: string) =>
      Effect.gen(function* () {
        const live = addresses.filter((_, i) => ids[i] !== victim)
        const filler = yield* makeKvClient({ replicas: live, mode: "balanced", timeoutMs })
        const writes = Math.ceil((2 * (options.logBytes ?? DEFAULT_LOG_BYTES)) / FILLER_VALUE_BYTES)
        let written = 0
        const startedMs = performance.now()
        while (written < writes) {
          if (performance.now() - startedMs > RECOVERY_BOUND_MS) {
            return yield* Effect.dieMessage(`only ${written} of ${writes} filler writes within ${RECOVERY_BOUND_MS} ms`)
          }
          const batch = yield* Effect.forEach(
            Array.from({ length: 16 }, (_, i) => written + i),
            (n) => Effect.either(filler.set(`fill-${n % 64}`, Buffer.alloc(FILLER_VALUE_BYTES, n % 251))),
            { concurrency: "unbounded" }
          )
          written += batch.filter((r) => r._tag === "Right").length
        }
      }).pipe(Effect.scoped)

    const recoveries: Array<Recovery> = []
    const kinds = options.faultKinds ?? FAULT_KINDS
    const faults: Partial<Record<FaultKind, number>> = Object.fromEntries(kinds.map((k) => [k, 0]))
    const inject = (kind: FaultKind) =>
      Effect.gen(function* () {
        faults[kind] = (faults[kind] ?? 0) + 1
        if (kind === "nats-restart") {
          const downMs = between(300, 1_500)
          const server =
            site.servers.length === 1 ? site.servers[0]! : site.servers[Math.floor(random() * site.servers.length)]!
          say(`${server.name}: kill -9, restart after ${downMs} ms`)
          yield* server.kill
          yield* Effect.sleep(downMs)
          yield* server.restart.pipe(Effect.orDie)
          const healedMs = performance.now()
          let slowest = 0
          for (let i = 0; i < ids.length; i++) slowest = Math.max(slowest, yield* caughtUp(i, healedMs))
          recoveries.push({ fault: kind, target: server.name, caughtUpMs: slowest, snapshot: false })
          say(`  every replica caught up ${slowest.toFixed(0)} ms after the server was back`)
          return
        }
        const index = Math.floor(random() * ids.length)
        const id = ids[index]!
        if (kind === "partition" || kind === "isolate") {
          const cutOff = site.cutOff?.[kind]
          if (cutOff === undefined) return yield* Effect.dieMessage(`this site cannot ${kind} a host`)
          const cutMs = between(1_000, 3_000)
          say(`${id}: ${kind === "partition" ? "host cut off at the link proxy" : "host link down"} for ${cutMs} ms`)
          yield* cutOff(index, true).pipe(Effect.orDie)
          yield* Effect.sleep(cutMs).pipe(Effect.ensuring(cutOff(index, false).pipe(Effect.orDie)))
          const healedMs = performance.now()
          yield* (site.healed ?? Effect.void).pipe(Effect.orDie)
          const linkedMs = performance.now() - healedMs
          const caughtUpMs = yield* caughtUp(index, healedMs)
          recoveries.push({ fault: kind, target: id, caughtUpMs, snapshot: false })
          say(
            `  links whole ${linkedMs.toFixed(0)} ms after the heal; ${id} served and caught up at ${caughtUpMs.toFixed(0)} ms`
          )
          return
        }
        if (kind === "flap") {
          const cutOff = site.cutOff?.partition
          if (cutOff === undefined) return yield* Effect.dieMessage("this site cannot cut a host off")
          const cycles = between(4, 8)
          const plan = Array.from({ length: cycles }, () => [between(200, 1_500), between(200, 1_500)] as const)
          say(`${id}: host flaps ${cycles} times (cut/healed ms: ${plan.map(([c, h]) => `${c}/${h}`).join(" ")})`)
          for (const [cutMs, healedMs] of plan) {
            yield* cutOff(index, true).pipe(Effect.orDie)
            yield* Effect.sleep(cutMs).pipe(Effect.ensuring(cutOff(index, false).pipe(Effect.orDie)))
            yield* Effect.sleep(healedMs)
          }
          const healedMs = performance.now()
          yield* (site.healed ?? Effect.void).pipe(Effect.orDie)
          const caughtUpMs = yield* caughtUp(index, healedMs)
          recoveries.push({ fault: kind, target: id, caughtUpMs, snapshot: false })
          say(`  ${id} served and caught up ${caughtUpMs.toFixed(0)} ms after the last heal`)
          return
        }
        if (kind === "pause") {
          const pausedMs = between(300, 3_000)
          say(`${id}: SIGSTOP for ${pausedMs} ms`)
          const child = group.processes.get(id)!.child
          child.kill("SIGSTOP")
          yield* Effect.sleep(pausedMs).pipe(Effect.ensuring(Effect.sync(() => child.kill("SIGCONT"))))
          const caughtUpMs = yield* caughtUp(index, performance.now())
          recoveries.push({ fault: kind, target: id, caughtUpMs, snapshot: false })
          say(`  ${id} caught up ${caughtUpMs.toFixed(0)} ms after SIGCONT`)
          return
        }
        const downMs = between(200, 2_000)
        say(`${id}: kill -9${kind === "snapshot-restart" ? ", overflow the peers' decision logs," : ""} restart`)
        yield* killReplica(id)
        if (kind === "snapshot-restart") yield* overflowLogs(id)
        else yield* Effect.sleep(downMs)
        const restarted = yield* restartReplica(id)
        const caughtUpMs = yield* caughtUp(index, restarted.spawnedMs)
        const snapshot = (yield* snapshotsOf(index)) > 0
        recoveries.push({ fault: kind, target: id, servingMs: restarted.servingMs, caughtUpMs, snapshot })
        say(
          `  ${id} served ${restarted.servingMs.toFixed(0)} ms after the restart, caught up at ${caughtUpMs.toFixed(0)} ms` +
            (snapshot ? " (from a snapshot)" : "")
        )
      })

    // ---- the schedule: one fault of each kind (seeded order), then random ones until the time is up --------
    const deadline = performance.now() + options.faultsMs
    const first = [...kinds]
    for (let i = first.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1))
      ;[first[i], first[j]] = [first[j]!, first[i]!]
    }
    yield* Effect.sleep(between(500, 1_500))
    for (const kind of first) {
      yield* inject(kind)
      yield* Effect.sleep(between(300, 1_500))
    }
    while (performance.now() < deadline) {
      const roll = random()
      yield* inject(
        options.faultKinds !== undefined
          ? options.faultKinds[Math.floor(roll * options.faultKinds.length)]!
          : roll < 0.4
            ? "kill"
            : roll < 0.8
              ? "pause"
              : roll < 0.9
                ? "snapshot-restart"
                : "nats-restart"
      )
      yield* Effect.sleep(between(300, 1_500))
    }

    // ---- the end: stop the clients, read every key through every replica, check -------------------------------
    stopping = true
    yield* Fiber.join(workload)
    say(`clients stopped: ${counts.invoked} operations, ${counts.unknown} unknown outcomes`)
    if (site.measure !== undefined) say(yield* site.measure.report.pipe(Effect.orDie))
    const finalValues = new Map<string, string | null>()
    for (let k = 0; k < (options.keys ?? 4); k++) {
      const key = `k${k}`
      for (let i = 0; i < ids.length; i++) {
        const value = yield* recordedRead(recorder, probes[i]!, `final-${ids[i]}`, key)
        if (i === 0) finalValues.set(key, value)
      }
    }
    const states = yield* settledGroupHashes(group, ids)
    const history = recorder.entries()
    const checkStart = performance.now()
    const linearizability = checkLinearizable(history)
    const checkMs = performance.now() - checkStart
    say(`checked ${history.length} operations in ${checkMs.toFixed(0)} ms: ${linearizability._tag}`)
    return {
      seed: options.seed,
      elapsedMs: performance.now() - began,
      operations: { ...counts, failureCodes },
      faults,
      recoveries,
      history,
      linearizability,
      checkMs,
      lostWrites: lostWrites(history, finalValues),
      states,
      events
    } satisfies NemesisReport
  })

/** A Get recorded in the history, retried (each try recorded) until it is answered. */
const recordedRead = (recorder: HistoryRecorder, client: KvClient, process: string, key: string) =>
  Effect.gen(function* () {
    for (let attempt = 0; ; attempt++) {
      const id = recorder.invoke(`${process}.${attempt}`, { _tag: "Get", key }, performance.now())
      const r = yield* Effect.either(client.get(key))
      if (r._tag === "Right") {
        const value = r.right.found ? Buffer.from(r.right.value).toString() : null
        recorder.complete(id, value === null ? { found: false } : { found: true, value }, performance.now())
        return value
      }
      recorder.fail(id, true)
      if (attempt > 100) return yield* Effect.dieMessage(`no answer to get(${key}) via ${process}: ${r.left.message}`)
      yield* Effect.sleep("200 millis")
    }
  })

/** The figures a long run prints. */
export const summarize = (report: NemesisReport): string => {
  const max = (values: ReadonlyArray<number>) => (values.length === 0 ? 0 : Math.max(...values))
  const restarts = report.recoveries.filter((r) => r.servingMs !== undefined)
  const { operations: ops } = report
  return [
    `seed ${report.seed}, ${(report.elapsedMs / 1000).toFixed(0)} s`,
    `operations: ${ops.invoked} invoked, ${ops.answered} answered, ${ops.unknown} unknown outcomes, ${ops.failed} failed (codes ${JSON.stringify(ops.failureCodes)})`,
    `faults: ${Object.entries(report.faults)
      .map(([k, n]) => `${n} ${k}`)
      .join(", ")}`,
    `restarts: ${restarts.length} (${restarts.filter((r) => r.snapshot).length} from a snapshot); max restart→serving ${max(restarts.map((r) => r.servingMs!)).toFixed(0)} ms, max restart→caught-up ${max(restarts.map((r) => r.caughtUpMs)).toFixed(0)} ms`,
    `pauses: max SIGCONT→caught-up ${max(report.recoveries.filter((r) => r.fault === "pause").map((r) => r.caughtUpMs)).toFixed(0)} ms; nats-server restarts: max back→caught-up ${max(report.recoveries.filter((r) => r.fault === "nats-restart").map((r) => r.caughtUpMs)).toFixed(0)} ms`,
    ...(["partition", "isolate", "flap"] as const).flatMap((kind) => {
      const healed = report.recoveries.filter((r) => r.fault === kind).map((r) => r.caughtUpMs)
      return healed.length === 0
        ? []
        : [
            `${kind}s: ${healed.length}, heal→resumed (served and caught up) ${healed.map((ms) => ms.toFixed(0)).join(", ")} ms`
          ]
    }),
    `history: ${report.history.length} operations, ${report.linearizability._tag} (checked in ${report.checkMs.toFixed(0)} ms); acknowledged writes lost: ${report.lostWrites.length}; state hashes: ${new Set(report.states.map((s) => s.stateHash)).size === 1 ? "converged" : "DIVERGED"}`
  ].join("\n")
}
