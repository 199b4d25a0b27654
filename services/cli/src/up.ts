/**
 * `reef up`: a whole local cluster. Starts nats-server (embedded, unless --nats is given) on stable ports,
 * then one `reef run` process per actor of every enabled role (roles/*: `up.plan`), printing each actor as it
 * becomes ready; once every one has joined it writes the cluster file (cluster-file.ts) and Prometheus's
 * target file, prints every endpoint and the actor table, and either runs the demo workload and stops
 * (--workload) or stays up until Ctrl-C, saying what it stops.
 */

import type { ChildProcess } from "node:child_process"
import { rmSync } from "node:fs"
import {
  type ChildStartError,
  CLIENT_IDENTITY,
  exitText,
  READY_PREFIX,
  startReefChild,
  stopTogetherOnClose
} from "@reef/devkit"
import { makeOutput, type Output, progressText } from "@reef/devkit/output"
import { isJoined, Membership, natsKernelLayer, startNatsServer } from "@reef/kernel"
import { ObservabilityLive } from "@reef/observability/live"
import type { Member } from "@reef/proto"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Runtime from "effect/Runtime"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { type CliFailure, ClusterStateError, UpFailedError } from "./cli/errors.js"
import { colourEnabled } from "./cli/terminal.js"
import {
  type ClusterActor,
  type ClusterFile,
  defaultClusterFilePath,
  readClusterFile,
  removeClusterFile,
  writeClusterFile
} from "./cluster-file.js"
import { type ClusterSecurity, makeClusterSecurity } from "./cluster-security.js"
import { enabledRoles, type UpInput } from "./commands/up.js"
import { kvWorkload } from "./kv-workload.js"
import { makePortChooser } from "./ports.js"
import { prometheusTargets, targetsPathFor, writePrometheusTargets } from "./prometheus-targets.js"
import { remoraWorkload } from "./remora-workload.js"
import { roles } from "./roles/index.js"
import type { PlannedActor } from "./roles/role.js"
import { sortMembers, statusText } from "./status-view.js"
import { formatTable } from "./table.js"
import { kernelWorkload, type WorkloadProgress } from "./workload.js"

/** What a worker logs when its coordinator retired it (run-worker.ts). */
const RETIRED_LINE = "retired by coordinator"

/** An actor with the ports `reef up` gave it. */
interface Placed extends PlannedActor {
  readonly name: string
  readonly ports: Readonly<Record<string, number>>
  readonly metricsPort: number
}

const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)}s`

/** Ports for every actor: its preferred ones when free (said otherwise), and a /metrics port each. */
const placeActors = (plan: ReadonlyArray<PlannedActor>, metricsBase: number, out: Output) =>
  Effect.gen(function* () {
    const choose = makePortChooser()
    const placed: Array<Placed> = []
    for (const [index, actor] of plan.entries()) {
      const name = `${actor.role}/${actor.id}`
      const ports: Record<string, number> = {}
      for (const [option, preferred] of Object.entries(actor.ports ?? {})) {
        const choice = yield* choose(preferred)
        if (choice.fallback !== undefined) {
          out.line(out.style.warn(`${name}: --${option} ${choice.fallback}; using ${choice.port}`))
        }
        ports[option] = choice.port
      }
      const metrics = yield* choose(metricsBase === 0 ? 0 : metricsBase + index)
      if (metrics.fallback !== undefined) {
        out.line(out.style.warn(`${name}: /metrics port ${metrics.fallback}; using ${metrics.port}`))
      }
      placed.push({ ...actor, name, ports, metricsPort: metrics.port })
    }
    return placed
  })

const startNats = (input: UpInput, out: Output, secured: ClusterSecurity["natsServer"]) =>
  Effect.gen(function* () {
    if (input.nats !== undefined) return { url: input.nats, embedded: false as const }
    const choose = makePortChooser()
    const client = yield* choose(input["nats-port"])
    const monitor = yield* choose(input["nats-monitor-port"])
    for (const [what, choice] of [
      ["NATS port", client],
      ["NATS monitoring port", monitor]
    ] as const) {
      if (choice.fallback !== undefined) out.line(out.style.warn(`${what} ${choice.fallback}; using ${choice.port}`))
    }
    const server = yield* startNatsServer({
      jetstream: true,
      port: client.port,
      monitorPort: monitor.port,
      exitWithParent: true,
      ...secured
    })
    return { url: server.url, monitor: server.monitorUrl, embedded: true as const }
  })

const portArgs = (actor: Placed) =>
  Object.entries(actor.ports).flatMap(([option, port]) => [`--${option}`, String(port)])

/** Starts every actor process at once, printing each as it becomes ready and a status line meanwhile. */
const startActors = (
  placed: ReadonlyArray<Placed>,
  common: ReadonlyArray<string>,
  out: Output,
  envOf: (role: string) => Record<string, string>
) =>
  Effect.gen(function* () {
    const started = performance.now()
    const waiting = new Set(placed.map((a) => a.name))
    const showWaiting = () =>
      out.status(
        waiting.size === 0
          ? ""
          : `starting ${placed.length} actors: ${placed.length - waiting.size} ready, waiting for ${[...waiting].join(" ")} (${seconds(started)})`
      )
    const ticker = yield* Effect.sync(showWaiting).pipe(Effect.repeat(Schedule.spaced("250 millis")), Effect.forkScoped)
    // Children colour their logs when this terminal shows colour, never otherwise (their stdout is a pipe).
    const colour: Record<string, string> = colourEnabled(process.stdout.isTTY)
      ? { FORCE_COLOR: "1" }
      : { NO_COLOR: "1" }
    // A worker its coordinator retired (scale-in, --autoscale) stops by itself with exit 0: it is started again,
    // a new process that waits as a spare, so the pool can grow again.
    const runtime = yield* Effect.runtime<Scope.Scope>()
    const start = (actor: Placed): Effect.Effect<ChildProcess, ChildStartError, Scope.Scope> => {
      let retired = false
      return startReefChild({
        name: actor.name,
        args: [
          "run",
          actor.role,
          "--id",
          actor.id,
          ...common,
          "--metrics-port",
          String(actor.metricsPort),
          ...actor.args,
          ...portArgs(actor)
        ],
        env: { ...colour, ...envOf(actor.role) },
        // A replica calibrates its round timer with its peers before it is ready; on a machine shared by
        // many busy processes (loads of 40 on 2 cores) that alone took more than 90 s.
        startTimeoutMs: 180_000,
        onExit: (exit) => {
          if (retired && exit.code === 0) {
            out.line(`${actor.name} was retired by its coordinator and stopped; starting it again as a spare`)
            Runtime.runFork(runtime)(
              start(actor).pipe(
                Effect.catchAll((e) => Effect.sync(() => out.line(out.style.warn(`${actor.name}: ${e.message}`))))
              )
            )
            return
          }
          const again = ["reef run", actor.role, "--id", actor.id, ...actor.args, ...portArgs(actor)].join(" ")
          out.line(
            out.style.warn(
              `${actor.name} (pid ${exit.pid}) exited: ${exitText(exit)}; the other actors keep running (to start it again: ${again})`
            )
          )
        },
        onLine: (line) => {
          if (line.includes(RETIRED_LINE)) retired = true
          if (!line.startsWith(READY_PREFIX)) return out.line(`${out.style.dim(`[${actor.name}]`)} ${line}`)
          const what = line.slice(READY_PREFIX.length).trim()
          if (!waiting.delete(actor.name)) return out.line(`${out.style.good("ready")} ${actor.name} again: ${what}`)
          out.line(`${out.style.good("ready")} ${actor.name} in ${seconds(started)}: ${what}`)
          showWaiting()
        }
      })
    }
    const children = yield* Effect.forEach(placed, start, { concurrency: "unbounded" }).pipe(
      Effect.ensuring(
        Effect.zipRight(
          Fiber.interrupt(ticker),
          Effect.sync(() => out.status(""))
        )
      )
    )
    return children
  })

/** The lines of the banner: every endpoint of the cluster. */
const bannerLines = (file: ClusterFile, members: ReadonlyArray<Member>, path: string, targets: string) => {
  const endpoints = (name: string, role?: string) =>
    sortMembers(members)
      .filter((m) => isJoined(m) && (role === undefined || m.address?.role === role))
      .flatMap((m) => {
        const address = m.lastHeartbeat?.endpoints[name]
        return address === undefined ? [] : [`${m.address?.id}=${address}`]
      })
  const kv = endpoints("kv", "replica")
  const resp = endpoints("resp", "replica")
  const remora = endpoints("grpc", "coordinator")
  const backups = endpoints("grpc", "backup")
  const airdb = endpoints("grpc", "airdb")
  const metrics = endpoints("metrics")
  const rows: Array<[string, string]> = [
    ["NATS", `${file.nats.url}${file.nats.embedded ? "" : " (external)"}`],
    ...(file.nats.monitor === undefined ? [] : [["NATS monitoring", file.nats.monitor] as [string, string]]),
    ["gateway (gRPC)", file.gateway],
    ...(kv.length === 0 ? [] : [["KV (gRPC)", kv.join("  ")] as [string, string]]),
    ...(resp.length === 0 ? [] : [["KV (Redis)", resp.join("  ")] as [string, string]]),
    ...(remora.length === 0 ? [] : [["Remora (gRPC)", remora.join("  ")] as [string, string]]),
    ...(backups.length === 0 ? [] : [["Ira backup (gRPC)", backups.join("  ")] as [string, string]]),
    ...(airdb.length === 0 ? [] : [["AirDB (gRPC)", airdb.join("  ")] as [string, string]]),
    ...(metrics.length === 0
      ? []
      : [["/metrics", metrics.map((m) => m.replace(/\/metrics$/, "")).join("  ")] as [string, string]]),
    ["Prometheus targets", targets],
    ["cluster file", path]
  ]
  const width = Math.max(...rows.map(([k]) => k.length))
  return rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`)
}

const clusterActors = (members: ReadonlyArray<Member>): ReadonlyArray<ClusterActor> =>
  members.filter(isJoined).map((m) => ({
    role: m.address?.role ?? "",
    id: m.address?.id ?? "",
    pid: m.lastHeartbeat?.pid ?? 0,
    endpoints: m.lastHeartbeat?.endpoints ?? {}
  }))

export const runUp = (input: UpInput): Effect.Effect<void, CliFailure> =>
  Effect.suspend((): Effect.Effect<void, CliFailure> => {
    const fromEnv = process.env.REEF_CLUSTER_FILE
    const path = input["cluster-file"] ?? (fromEnv === undefined || fromEnv === "" ? defaultClusterFilePath() : fromEnv)
    const existing = readClusterFile(path)
    if (existing._tag === "Found") {
      return Effect.fail(
        new ClusterStateError({
          message: `a cluster is already running from here (reef up pid ${existing.file.pid}, ${existing.path}); stop it first, or pass --cluster-file`
        })
      )
    }
    return up(input, path).pipe(
      Effect.scoped,
      Effect.onExit(() => Effect.sync(() => process.stdout.write("Stopped.\n")))
    )
  })

const up = (input: UpInput, path: string) =>
  Effect.gen(function* () {
    const out = makeOutput()
    const startedAt = performance.now()
    const plan = enabledRoles(input).flatMap((role) => role.up.plan(input))
    const counts = new Map<string, Array<string>>()
    for (const actor of plan) counts.set(actor.role, [...(counts.get(actor.role) ?? []), actor.id])
    out.line(
      `Starting Reef cluster "${input.cluster}": ${input.nats === undefined ? "nats-server, " : ""}${[...counts]
        .map(([role, ids]) => `${role} ${ids.join(" ")}`)
        .join(", ")}`
    )

    // With --secure or --tls: identities, certificates, a token; removed with the cluster (cluster-security.ts).
    const security = yield* Effect.acquireRelease(
      Effect.try({
        try: () => makeClusterSecurity(path, input.cluster, { secure: input.secure, tls: input.tls }),
        catch: (cause) => new UpFailedError({ message: String((cause as Error)?.message ?? cause) })
      }),
      (s) => Effect.sync(() => s.remove())
    )
    // This process's own clients (the workload's, its kernel) connect like every other.
    Object.assign(process.env, security.envOf(CLIENT_IDENTITY))
    const nats = yield* startNats(input, out, security.natsServer)
    out.line(
      `${out.style.good("ready")} nats-server: ${nats.url}${"monitor" in nats && nats.monitor !== undefined ? ` (monitoring ${nats.monitor})` : ""}`
    )
    const placed = yield* placeActors(plan, input["metrics-port"], out)
    const children = yield* startActors(placed, ["--nats", nats.url, "--cluster", input.cluster], out, security.envOf)
    yield* stopTogetherOnClose(children)

    const program = Effect.gen(function* () {
      const membership = yield* Membership
      const members = yield* membership
        .awaitMembers((ms) =>
          plan.every((a) => ms.some((m) => isJoined(m) && m.address?.role === a.role && m.address.id === a.id))
        )
        .pipe(
          Effect.timeoutFail({
            duration: "30 seconds",
            onTimeout: () =>
              new UpFailedError({ message: "every actor printed ready, but not all of them joined within 30 s" })
          })
        )
      const gateway = placed.find((a) => a.role === "gateway")
      const file: ClusterFile = {
        version: 1,
        cluster: input.cluster,
        pid: process.pid,
        startedAt: new Date().toISOString(),
        nats: {
          url: nats.url,
          ...("monitor" in nats && nats.monitor !== undefined ? { monitor: nats.monitor } : {}),
          embedded: nats.embedded
        },
        ...(security.ca !== undefined && { security: security.file }),
        gateway: gateway === undefined ? "" : `127.0.0.1:${gateway.ports["grpc-port"]}`,
        prometheusTargets: targetsPathFor(path),
        actors: clusterActors(members)
      }
      // Written once everything has joined: a command that finds the file finds a working cluster.
      yield* Effect.acquireRelease(
        Effect.sync(() => {
          writeClusterFile(path, file)
          writePrometheusTargets(file.prometheusTargets!, prometheusTargets(members, input.cluster))
        }),
        () =>
          Effect.sync(() => {
            removeClusterFile(path)
            rmSync(file.prometheusTargets!, { force: true })
          })
      )
      // Actors that join later (`reef run counter --id c9`) or leave are kept current in both files.
      yield* membership.changes.pipe(
        Stream.debounce("200 millis"),
        Stream.mapEffect(() => membership.members),
        Stream.runForEach((current) =>
          Effect.sync(() => {
            writeClusterFile(path, { ...file, actors: clusterActors(current) })
            writePrometheusTargets(file.prometheusTargets!, prometheusTargets(current, input.cluster))
          })
        ),
        Effect.forkScoped
      )

      out.line(`\n${out.style.strong(`Reef cluster "${input.cluster}" is up`)} (${seconds(startedAt)})`)
      for (const line of bannerLines(file, members, path, file.prometheusTargets!)) out.line(line)
      out.line("")
      out.line(statusText({ members, nowMs: Date.now(), roles }, out.style))
      const names = [...counts].map(([role, ids]) => `${role} ${ids.join(" ")}`).join(", ")
      yield* Effect.addFinalizer(() =>
        Effect.sync(() =>
          out.line(
            `\nStopping ${placed.length} actor processes (${names})${nats.embedded ? " and nats-server" : ""}...`
          )
        )
      )
      if (!input.workload) {
        const remora = placed.some((a) => a.role === "coordinator") ? ", reef tx submit ycsb --keys ycsb/1" : ""
        out.line(
          `\nCtrl-C stops the cluster. In another terminal: reef status, reef kv put a 1, reef kv get a${remora}, reef run counter --id c9`
        )
        return yield* Effect.never
      }
      // The workload is a client of the cluster: its spans are exported like the actors' (OTEL_* variables).
      yield* runWorkload(placed, input.cluster, out).pipe(
        Effect.provide(ObservabilityLive({ role: "workload", id: `reef-up-${process.pid}` }))
      )
    })
    yield* program.pipe(
      Effect.scoped,
      Effect.provide(natsKernelLayer({ servers: nats.url, name: "reef-up" }, { cluster: input.cluster }))
    )
  })

/**
 * Progress of the workload's parts: a line that rewrites itself on a terminal (at most every 100 ms), and on
 * other output a plain line when a part starts and every 5 s while it runs.
 */
const workloadProgress = (out: Output): WorkloadProgress => {
  let current = ""
  let startedMs = 0
  let drawnMs = 0
  return (part, done, total) => {
    const now = performance.now()
    if (part !== current) {
      current = part
      startedMs = now
      drawnMs = now
      if (!out.live) out.line(`${part}: ${total.toLocaleString("en-US")} operations`)
    }
    const interval = out.live ? 100 : 5_000
    if (now - drawnMs < interval && done < total) return
    drawnMs = now
    const text = progressText(part, done, total, (now - startedMs) / 1000)
    if (out.live) out.status(done < total ? text : "")
    else if (done < total) out.line(text)
  }
}

const runWorkload = (placed: ReadonlyArray<Placed>, cluster: string, out: Output) =>
  Effect.gen(function* () {
    const counters = placed.filter((a) => a.role === "counter").map((a) => ({ cluster, role: a.role, id: a.id }))
    const kv = placed.filter((a) => a.role === "replica").map((a) => `127.0.0.1:${a.ports["kv-port"]}`)
    out.line("\nRunning the demo workload")
    const progress = workloadProgress(out)
    const kernel =
      counters.length > 0
        ? yield* kernelWorkload(counters, progress).pipe(
            Effect.timeoutFail({
              duration: "30 seconds",
              onTimeout: () => new UpFailedError({ message: "kernel workload: no result in 30 s" })
            })
          )
        : { rows: [], ok: true }
    const kvResult =
      kv.length > 0
        ? yield* kvWorkload(kv, { sets: 2_000, inFlight: 128, partTimeoutSeconds: 45, progress })
        : { rows: [], ok: true }
    const coordinator = placed.find((a) => a.role === "coordinator")
    const remora =
      coordinator !== undefined
        ? yield* remoraWorkload(`127.0.0.1:${coordinator.ports["execution-port"]}`, {
            transactions: 10_000,
            inFlight: 4_000,
            invalidShare: 0.02,
            timeoutSeconds: 60,
            progress
          })
        : { rows: [], ok: true }
    out.status("")
    const result = {
      rows: [...kernel.rows, ...kvResult.rows, ...remora.rows],
      ok: kernel.ok && kvResult.ok && remora.ok
    }
    out.line(
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
    if (!result.ok) return yield* new UpFailedError({ message: "workload check failed (see the table)" })
  })
