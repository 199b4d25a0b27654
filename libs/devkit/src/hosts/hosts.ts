/**
 * The hosts harness: `startHosts` makes N hosts (netns.ts), runs one nats-server per host joined into a
 * NATS cluster by routes, and puts the link proxy (link-proxy.ts) on every route: server i reaches server j
 * only through the proxy's port for j, which adds the configured delay and jitter and can cut a host off.
 * Each server advertises its proxy port as its cluster address, so gossiped (implicit) routes go through the
 * proxy too. Actors run on a host with `host.exec` in front of their command and connect to that host's
 * server (`host.natsUrl`); the test process reaches every host through the gateway.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface, type Interface } from "node:readline"
import { fileURLToPath, pathToFileURL } from "node:url"
import { findNatsServerBinary } from "@reef/kernel"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import { killOnExit, type ServerProcess, startServerProcess } from "../server-process.js"
import type { ProxyOptions, ProxyStats } from "./link-proxy.js"
import { type Host, type HostNetwork, HostsError, makeHostNetwork } from "./netns.js"

export const NATS_CLIENT_PORT = 4222
export const NATS_ROUTE_PORT = 6222
export const NATS_MONITOR_PORT = 8222

export interface HostsOptions {
  readonly n: number
  /** One-way delay the proxy adds on every inter-host link, in ms. */
  readonly delayMs?: number
  /** Uniform jitter around the delay, in ms. */
  readonly jitterMs?: number
  readonly seed?: number
  /** Clustered JetStream on every server (roles that use it need it). */
  readonly jetstream?: boolean
  /** Progress lines. */
  readonly say?: (line: string) => void
}

export interface ClusterHost extends Host {
  /** This host's nats-server, for the actors on it. */
  readonly natsUrl: string
}

/** One host's nats-server. */
export interface HostNatsServer {
  readonly host: string
  /** SIGKILL, no goodbye. */
  readonly kill: Effect.Effect<void>
  /** The running server's pid (`ip netns exec` execs it), for SIGSTOP and SIGCONT; undefined while it is down. */
  readonly pid: Effect.Effect<number | undefined>
  /** Starts it again with the same configuration and store. */
  readonly restart: Effect.Effect<void, HostsError>
}

export interface Hosts {
  readonly network: HostNetwork
  readonly hosts: ReadonlyArray<ClusterHost>
  readonly servers: ReadonlyArray<HostNatsServer>
  /** Every server's URL, for a client that may use any (comma-separated, as `--nats` takes them). */
  readonly natsUrls: ReadonlyArray<string>
  /** Cuts host `index` off at the proxy: its route connections close and new ones are refused. */
  readonly cut: (index: number) => Effect.Effect<void, HostsError>
  readonly heal: (index: number) => Effect.Effect<void, HostsError>
  readonly setDelay: (delayMs: number, jitterMs: number) => Effect.Effect<void, HostsError>
  readonly proxyStats: Effect.Effect<ProxyStats, HostsError>
  /** Starts the proxy's counts afresh. */
  readonly resetProxyStats: Effect.Effect<void, HostsError>
  /** Waits until every server has a route to every other one (after a start or a heal). */
  readonly routesFormed: (seconds?: number) => Effect.Effect<void, HostsError>
  /** `hostname -> routes` as each server's /routez reports it. */
  readonly routeCounts: Effect.Effect<ReadonlyArray<number>, HostsError>
}

const here = fileURLToPath(import.meta.url)
const proxyMain = join(here, "..", here.endsWith(".ts") ? "link-proxy-main.ts" : "link-proxy-main.js")

/** The link proxy as its own process (link-proxy-main.ts), driven over its stdin: what a harness asks of it. */
export interface LinkProxyProcess {
  /** The listening port of each link, in the order given. */
  readonly ports: ReadonlyArray<number>
  readonly cut: (host: number) => Effect.Effect<void, HostsError>
  readonly heal: (host: number) => Effect.Effect<void, HostsError>
  readonly setDelay: (delayMs: number, jitterMs: number) => Effect.Effect<void, HostsError>
  readonly stats: Effect.Effect<ProxyStats, HostsError>
  /** Starts the proxy's counts afresh. */
  readonly reset: Effect.Effect<void, HostsError>
}

/** The proxy process, driven line by line over stdin/stdout. */
const spawnProxyProcess = (options: ProxyOptions) =>
  Effect.acquireRelease(
    Effect.async<{ child: ChildProcess; lines: Interface; ports: ReadonlyArray<number> }, HostsError>((resume) => {
      const loader = proxyMain.endsWith(".ts")
        ? ["--import", pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href]
        : []
      const child = killOnExit(
        spawn(process.execPath, [...loader, proxyMain, JSON.stringify(options)], { stdio: ["pipe", "pipe", "pipe"] })
      )
      let errors = ""
      child.stderr?.on("data", (chunk: Buffer) => {
        errors = (errors + chunk.toString()).slice(-4000)
      })
      const lines = createInterface({ input: child.stdout! })
      let settled = false
      lines.once("line", (line) => {
        settled = true
        const match = /^proxy ready (.*)$/.exec(line)
        if (match === null) resume(Effect.fail(new HostsError({ reason: `link proxy: ${line}\n${errors}` })))
        else resume(Effect.succeed({ child, lines, ports: JSON.parse(match[1]!) as Array<number> }))
      })
      child.once("exit", (code) => {
        if (!settled) resume(Effect.fail(new HostsError({ reason: `link proxy exited (${code}):\n${errors}` })))
      })
    }),
    ({ child }) =>
      Effect.async<void>((resume) => {
        if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
        child.once("exit", () => resume(Effect.void))
        child.stdin?.end()
        setTimeout(() => child.kill("SIGKILL"), 3_000).unref()
      })
  )

/**
 * The link proxy in its own process, in the current scope: `options.links` lead to hosts' ports (a NATS
 * cluster's routes here, an etcd cluster's peer ports in a benchmark), `hostAddresses` name the hosts.
 */
export const startLinkProxyProcess = (options: ProxyOptions) =>
  Effect.gen(function* () {
    const proxy = yield* spawnProxyProcess(options)
    const replies: Array<(line: string) => void> = []
    proxy.lines.on("line", (line) => replies.shift()?.(line))
    const command = (line: string) =>
      Effect.async<string, HostsError>((resume) => {
        replies.push((reply) =>
          reply.startsWith("error")
            ? resume(Effect.fail(new HostsError({ reason: `link proxy: ${reply}` })))
            : resume(Effect.succeed(reply))
        )
        proxy.child.stdin!.write(`${line}\n`)
      })
    const result: LinkProxyProcess = {
      ports: proxy.ports,
      cut: (index) => command(`cut ${index}`).pipe(Effect.asVoid),
      heal: (index) => command(`heal ${index}`).pipe(Effect.asVoid),
      setDelay: (delayMs, jitterMs) => command(`delay ${delayMs} ${jitterMs}`).pipe(Effect.asVoid),
      stats: command("stats").pipe(Effect.map((line) => JSON.parse(line.slice("stats ".length)) as ProxyStats)),
      reset: command("reset").pipe(Effect.asVoid)
    }
    return result
  })

const natsConfig = (
  host: Host,
  index: number,
  hosts: ReadonlyArray<Host>,
  gateway: string,
  ports: ReadonlyArray<number>,
  storeDir: string,
  jetstream: boolean
) =>
  [
    `server_name: ${host.name}`,
    `listen: "0.0.0.0:${NATS_CLIENT_PORT}"`,
    `http: "${host.address}:${NATS_MONITOR_PORT}"`,
    ...(jetstream ? [`jetstream { store_dir: ${JSON.stringify(storeDir)} }`] : []),
    "cluster {",
    "  name: reef-hosts",
    `  listen: "${host.address}:${NATS_ROUTE_PORT}"`,
    // Gossip hands out the proxy's port for this server, so no route bypasses the proxy.
    `  advertise: "${gateway}:${ports[index]}"`,
    "  routes: [",
    ...hosts.flatMap((_, j) => (j === index ? [] : [`    "nats-route://${gateway}:${ports[j]}"`])),
    "  ]",
    "}",
    ""
  ].join("\n")

/**
 * Host `host`'s nats-server (`startServerProcess`, run through `ip netns exec`), restartable: each life in a
 * scope of its own, the current one closed when `scope` closes.
 */
export const startHostNats = (binary: string, host: Host, configFile: string) =>
  Effect.gen(function* () {
    let life: { readonly scope: Scope.CloseableScope; readonly server: ServerProcess } | undefined
    const stop = Effect.suspend(() => {
      const current = life
      life = undefined
      return current === undefined ? Effect.void : Scope.close(current.scope, Exit.void)
    })
    const start = Effect.gen(function* () {
      const scope = yield* Scope.make()
      const server = yield* startServerProcess({
        name: `nats-server on ${host.name}`,
        command: host.exec[0]!,
        args: () => [...host.exec.slice(1), binary, "-c", configFile],
        port: NATS_CLIENT_PORT,
        ready: /Server is ready/,
        startTimeoutMs: 15_000
      }).pipe(
        Scope.extend(scope),
        Effect.tapError(() => Scope.close(scope, Exit.void)),
        Effect.mapError((e) => new HostsError({ reason: e.reason }))
      )
      life = { scope, server }
    })
    yield* Effect.acquireRelease(start, () => stop)
    const kill = Effect.suspend(() => (life === undefined ? Effect.void : Effect.zipRight(life.server.kill, stop)))
    const pid = Effect.sync(() => life?.server.pid)
    const server: HostNatsServer = { host: host.name, kill, pid, restart: Effect.zipRight(kill, start) }
    return server
  })

export const startHosts = (options: HostsOptions) =>
  Effect.gen(function* () {
    const say = options.say ?? (() => {})
    const binary = findNatsServerBinary()
    if (binary === undefined) return yield* new HostsError({ reason: "nats-server not found" })
    const network = yield* makeHostNetwork(options.n)
    const { hosts, gateway } = network
    say(`hosts: ${hosts.map((h) => `${h.name} ${h.address}`).join(", ")} (gateway ${gateway})`)
    const proxy = yield* startLinkProxyProcess({
      links: hosts.map((h, j) => ({
        to: j,
        listenHost: gateway,
        listenPort: 0,
        targetHost: h.address,
        targetPort: NATS_ROUTE_PORT
      })),
      hostAddresses: hosts.map((h) => h.address),
      delayMs: options.delayMs ?? 0,
      jitterMs: options.jitterMs ?? 0,
      seed: options.seed ?? 1
    })
    const storeRoot = yield* Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "reef-hosts-"))),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    )
    const servers: Array<HostNatsServer> = []
    for (const [i, host] of hosts.entries()) {
      const storeDir = join(storeRoot, host.name)
      const configFile = join(storeRoot, `${host.name}.conf`)
      writeFileSync(configFile, natsConfig(host, i, hosts, gateway, proxy.ports, storeDir, options.jetstream === true))
      servers.push(yield* startHostNats(binary, host, configFile))
    }
    const routeCounts = routeCountsOf(hosts)
    const routesFormed = (seconds = 30) => routesFormedOf(hosts, seconds)
    yield* routesFormed()
    say(
      `NATS cluster of ${hosts.length} formed through the link proxy (${options.delayMs ?? 0} ms ± ${options.jitterMs ?? 0} ms per link)`
    )
    const result: Hosts = {
      network,
      hosts: hosts.map((h) => ({ ...h, natsUrl: `nats://${h.address}:${NATS_CLIENT_PORT}` })),
      servers,
      natsUrls: hosts.map((h) => `nats://${h.address}:${NATS_CLIENT_PORT}`),
      cut: proxy.cut,
      heal: proxy.heal,
      setDelay: proxy.setDelay,
      proxyStats: proxy.stats,
      resetProxyStats: proxy.reset,
      routesFormed,
      routeCounts
    }
    return result
  })

/** How many other servers each host's nats-server has a route to (its /routez on the monitoring port). */
export const routeCountsOf = (hosts: ReadonlyArray<Host>) =>
  Effect.forEach(
    hosts,
    (host) =>
      Effect.tryPromise({
        try: async () => {
          const response = await fetch(`http://${host.address}:${NATS_MONITOR_PORT}/routez`, {
            signal: AbortSignal.timeout(2_000)
          })
          const body = (await response.json()) as { routes?: Array<{ remote_id: string }> }
          return new Set((body.routes ?? []).map((r) => r.remote_id)).size
        },
        catch: (cause) => new HostsError({ reason: `routez of ${host.name}: ${cause}` })
      }),
    { concurrency: "unbounded" }
  )

/** Waits until every host's server has a route to every other one (a liveness bound, not a timing claim). */
export const routesFormedOf = (hosts: ReadonlyArray<Host>, seconds = 30) =>
  routeCountsOf(hosts).pipe(
    Effect.filterOrFail(
      (counts) => counts.every((c) => c >= hosts.length - 1),
      (counts) => new HostsError({ reason: `routes per server: ${counts.join(", ")}` })
    ),
    Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo(`${seconds} seconds`))),
    Effect.asVoid
  )
