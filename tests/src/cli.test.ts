/**
 * The `reef` binary as a user runs it from a clean clone: `reef up` in one terminal; in another (the same
 * directory, so the same .reef/cluster.json) `reef kv put a 1`, `reef kv get a`, `reef status --json` and
 * `reef run counter --id c9`, none of them with a --nats or --gateway flag. Then what leaves the processes:
 * a replica's /metrics, the Grafana dashboard's queries against what running actors export (and evaluated
 * by a real Prometheus when one is installed), and Ctrl-C stopping everything `reef up` started.
 * Every port is a free one, never the defaults, so the test does not collide with a `reef up` of a person.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { freeListenPort, portFree, reefArgv, repoRoot } from "@reef/devkit"
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "@reef/observability"
import {
  dashboardQueries,
  exportedSampleNames,
  promqlMetricNames,
  withGrafanaVariables
} from "@reef/observability/dashboard"
import * as Effect from "effect/Effect"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { makeHarness, startNats } from "./harness.js"

const running: Array<ChildProcess> = []
/** The nats-server of tests that need one without `reef up`'s embedded server. */
const harness = makeHarness()
afterAll(() => harness.close())

const killGroup = (child: ChildProcess) => {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
  try {
    process.kill(-child.pid, "SIGKILL")
  } catch {
    child.kill("SIGKILL")
  }
}

const reef = (
  args: ReadonlyArray<string>,
  options: { readonly cwd?: string; readonly env?: Readonly<Record<string, string>> } = {}
) => {
  const child = spawn(process.execPath, [...reefArgv(args)], {
    stdio: ["ignore", "pipe", "pipe"],
    // Each `reef` runs in its own process group: a failed test must not leave its actor processes behind.
    detached: true,
    cwd: options.cwd ?? repoRoot,
    env: { ...process.env, OTEL_SDK_DISABLED: "true", NO_COLOR: "1", REEF_CLUSTER_FILE: "", ...options.env }
  })
  running.push(child)
  const lines: Array<string> = []
  const waiters: Array<{ match: (line: string) => boolean; resolve: () => void }> = []
  for (const stream of [child.stdout!, child.stderr!]) {
    createInterface({ input: stream }).on("line", (line) => {
      lines.push(line)
      for (const w of waiters.filter((w) => w.match(line))) w.resolve()
    })
  }
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  const waitForLine = (match: (line: string) => boolean) =>
    new Promise<void>((resolve, reject) => {
      if (lines.some(match)) return resolve()
      waiters.push({ match, resolve })
      void exited.then((code) => reject(new Error(`exited (${code}) before the line; output:\n${lines.join("\n")}`)))
    })
  /** Waits for the exit and returns the code with stdout and stderr lines, in order. */
  const result = async () => ({ code: await exited, output: lines.join("\n") })
  return { child, lines, exited, waitForLine, result }
}

/**
 * NATS, its monitoring, the gateway, the KV range, the /metrics range, Remora's, the backup's and AirDB's ports of
 * a `reef up`: below the
 * ephemeral range (a client socket of the starting cluster could take an ephemeral one before its server binds).
 */
const ports = () =>
  Effect.runPromise(
    Effect.all([
      freeListenPort(),
      freeListenPort(),
      freeListenPort(),
      freeListenPort("127.0.0.1", 8),
      freeListenPort("127.0.0.1", 16),
      freeListenPort(),
      freeListenPort("127.0.0.1", 8),
      freeListenPort(),
      freeListenPort()
    ])
  )

describe("reef from a clean clone", () => {
  let dir: string
  let up: ReturnType<typeof reef>
  let nats = 0
  let gateway = 0
  let receiver: OtlpReceiver
  /** Every process of the cluster exports its spans and metrics to `receiver`, and so does the CLI. */
  let tracing: Record<string, string> = {}

  beforeAll(async () => {
    // A directory of its own: `reef up` writes .reef/cluster.json where it starts, the other commands find it there.
    dir = mkdtempSync(join(tmpdir(), "reef-cli-test-"))
    receiver = await harness.run(startOtlpReceiver())
    tracing = {
      OTEL_SDK_DISABLED: "false",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: "100",
      OTEL_METRIC_EXPORT_INTERVAL: "1000"
    }
    const [natsPort, monitorPort, grpcPort, kvPort, metricsPort, executionPort, respPort, backupPort, airdbPort] =
      await ports()
    nats = natsPort
    gateway = grpcPort
    up = reef(
      [
        "up",
        ...["--nats-port", String(natsPort), "--nats-monitor-port", String(monitorPort)],
        ...["--grpc-port", String(grpcPort), "--kv-port", String(kvPort), "--metrics-port", String(metricsPort)],
        ...["--execution-port", String(executionPort), "--resp-port", String(respPort)],
        ...["--backup-port", String(backupPort), "--airdb-port", String(airdbPort)],
        ...["--cluster", "clitest"],
        // An Ira primary and backup, and an AirDB client too: the dashboard's rows for them read their metrics.
        ...["--with", "chain,backup,airdb"]
      ],
      { cwd: dir, env: tracing }
    )
    // The banner's last line: every endpoint has been printed by then.
    await up.waitForLine((l) => l.startsWith("Ctrl-C stops the cluster"))
  }, 300_000)

  afterAll(async () => {
    if (up !== undefined) killGroup(up.child)
    for (const child of running.splice(0)) killGroup(child)
    rmSync(dir, { recursive: true, force: true })
  })

  /** Runs a command in the cluster's directory, as a second terminal would. */
  const inCluster = async (args: ReadonlyArray<string>) => {
    const ran = await reef(args, { cwd: dir }).result()
    expect(ran.code, `reef ${args.join(" ")}:\n${ran.output}\nreef up:\n${up.lines.join("\n")}`).toBe(0)
    return ran.output
  }

  it("prints every endpoint and writes the cluster file with them", () => {
    const banner = up.lines.join("\n")
    expect(banner).toContain(`nats://127.0.0.1:${nats}`)
    expect(banner).toContain(`gateway (gRPC)      127.0.0.1:${gateway}`)
    expect(banner).toMatch(/KV \(gRPC\)\s+r1=127\.0\.0\.1:\d+\s+r2=127\.0\.0\.1:\d+\s+r3=127\.0\.0\.1:\d+/)
    expect(banner).toMatch(/Remora \(gRPC\)\s+x1=127\.0\.0\.1:\d+/)
    expect(banner).toMatch(/KV \(Redis\)\s+r1=127\.0\.0\.1:\d+/)
    // Every gRPC endpoint is in the banner: the Ira backup's and AirDB's too.
    expect(banner).toMatch(/Ira backup \(gRPC\)\s+b1=127\.0\.0\.1:\d+/)
    expect(banner).toMatch(/AirDB \(gRPC\)\s+a1=127\.0\.0\.1:\d+/)
    for (const actor of [
      ...["gateway/gw1", "counter/c1", "counter/c2", "replica/r1", "replica/r2", "replica/r3", "backup/b1", "airdb/a1"],
      ...["coordinator/x1", "worker/w1", "worker/w2", "worker/w3"]
    ]) {
      expect(banner).toMatch(new RegExp(`ready ${actor} in [\\d.]+s`))
    }
    const file = JSON.parse(readFileSync(join(dir, ".reef", "cluster.json"), "utf8"))
    expect(file).toMatchObject({
      cluster: "clitest",
      gateway: `127.0.0.1:${gateway}`,
      nats: { url: `nats://127.0.0.1:${nats}` }
    })
  })

  it("kv put, kv get, status --json and run counter need no flags", async () => {
    expect(await inCluster(["kv", "put", "a", "1"])).toMatch(/^OK \(version 1, instance \d+\)$/)
    expect(await inCluster(["kv", "get", "a"])).toBe("1")
    const status = JSON.parse(await inCluster(["status", "--json"]))
    const ids = status.members.map((m: { role: string; id: string }) => `${m.role}/${m.id}`)
    expect(ids).toEqual(expect.arrayContaining(["gateway/gw1", "counter/c1", "counter/c2", "replica/r1", "nic/r1"]))
    const r1 = status.members.find((m: { role: string; id: string }) => m.role === "replica" && m.id === "r1")
    expect(r1).toMatchObject({
      state: "joined",
      status: "running",
      endpoints: { kv: expect.stringMatching(/^127\.0\.0\.1:\d+$/), resp: expect.stringMatching(/^127\.0\.0\.1:\d+$/) }
    })
    // Numbers are JSON numbers for scripts, not the text heartbeats carry.
    expect(r1.roleStatus.applied).toBeGreaterThan(0)
    expect(r1.columns).toMatchObject({ group: "kv", applied: expect.any(Number), lag: expect.any(Number) })

    const counter = reef(["run", "counter", "--id", "c9"], { cwd: dir })
    await counter.waitForLine((l) => l.startsWith("reef ready: counter c9"))
    const joined = JSON.parse(await inCluster(["status", "--role", "counter", "-o", "json"]))
    expect(joined.members.map((m: { id: string; state: string }) => `${m.id} ${m.state}`)).toContain("c9 joined")
    counter.child.kill("SIGTERM")
    expect(await counter.exited).toBe(0)
    // Recently left actors stay listed, as such.
    const left = JSON.parse(await inCluster(["status", "--role", "counter", "-o", "json"]))
    expect(left.members.map((m: { id: string; state: string }) => `${m.id} ${m.state}`)).toContain("c9 left")
    expect(await inCluster(["ping", "counter/c1", "--relay", "counter/c2"])).toMatch(
      /counter\/c1 \(pid \d+\) -> counter\/c2/
    )
  }, 120_000)

  it("reef tx submit signs a transaction and prints its receipt; tx receipt finds it; a resubmission gets it again", async () => {
    const id = `cli-test-${Date.now()}`
    const first = await inCluster(["tx", "submit", "ycsb", "--keys", "ycsb/1,ycsb/2", "--id", id])
    expect(first).toMatch(new RegExp(`^${id} executed: seq \\d+, height \\d+, worker w\\d`))
    const receipt = JSON.parse(await inCluster(["tx", "receipt", id, "-o", "json"]))
    expect(receipt).toMatchObject({ txId: id, pending: false, receipt: { txId: id, status: "EXECUTED" } })
    const noOp = JSON.parse(
      await inCluster(["tx", "submit", "ycsb", "--keys", "ycsb/1", "--bad-signature", "-o", "json"])
    )
    expect(noOp.receipt.status).toBe("INVALID_SIGNATURE")
    // Submitting an id again is idempotent: the original receipt, never a second execution.
    const again = await inCluster(["tx", "submit", "ycsb", "--keys", "ycsb/1", "--id", id])
    expect(again.replace(/ in \d+ ms$/, "")).toBe(first.replace(/ in \d+ ms$/, ""))
    const state = JSON.parse(await inCluster(["tx", "state", "-o", "json"]))
    expect(state).toMatchObject({ workers: ["w1", "w2", "w3"] })
    expect(state.completed).toBeGreaterThanOrEqual(2)
  }, 60_000)

  it("reef tx get decodes an object by its contract and says when there is none", async () => {
    await inCluster(["tx", "submit", "token", "--from", "tok/cli-a", "--to", "tok/cli-b", "--amount", "5"])
    expect(await inCluster(["tx", "get", "tok/cli-a"])).toMatch(
      /^tok\/cli-a \(token account\): balance 999995, transfers 1 \(version 1 at w\d\)$/
    )
    const json = JSON.parse(await inCluster(["tx", "get", "tok/cli-b", "-o", "json"]))
    expect(json).toMatchObject({
      key: "tok/cli-b",
      kind: "token account",
      balance: 1_000_005,
      transfers: 1,
      version: 1
    })
    const missing = await reef(["tx", "get", "nosuch/obj"], { cwd: dir }).result()
    expect(missing.code).toBe(1)
    expect(missing.output).toBe(
      "reef: object nosuch/obj not found: no contract's namespace holds it (tok/, ycsb/, tpcc/) and nothing wrote it"
    )
  }, 60_000)

  it("errors blame the right thing: an unknown actor, a cas that did not swap", async () => {
    const ping = await reef(["ping", "counter/c9"], { cwd: dir }).result()
    expect(ping.code).toBe(1)
    expect(ping.output).toBe("reef: no actor counter/c9 in cluster clitest (there are counter/c1, c2)")
    await inCluster(["kv", "put", "casme", "1"])
    const cas = await reef(["kv", "cas", "casme", "3", "--expect", "2"], { cwd: dir }).result()
    expect(cas.code).toBe(1)
    expect(cas.output).toMatch(/^reef: kv cas casme: not swapped: its value is "1" \(instance \d+\)$/)
    expect(await inCluster(["kv", "cas", "casme", "3", "--expect", "1"])).toMatch(/^swapped \(instance \d+\)$/)
  }, 60_000)

  it("a replica started with default flags does not form a second group under the running group's name", async () => {
    const stray = await reef(["run", "replica", "--id", "r0"], { cwd: dir }).result()
    expect(stray.code, stray.output).toBe(1)
    expect(stray.output).toMatch(
      /^reef: group kv is already running in cluster clitest with members r1,r2,r3, and r0 is not one of them: /
    )
    expect(stray.output.split("\n")).toHaveLength(1)
    const status = JSON.parse(await inCluster(["status", "--role", "replica", "-o", "json"]))
    expect(status.members.map((m: { id: string }) => m.id)).toEqual(["r1", "r2", "r3"])
  }, 60_000)

  it("reef watch and reef status --watch both exit 0 on Ctrl-C", async () => {
    for (const args of [["watch"], ["status", "--watch"]]) {
      const watching = reef(args, { cwd: dir })
      await watching.waitForLine((l) => /joined|replica/.test(l))
      watching.child.kill("SIGINT")
      expect(await watching.exited, `reef ${args.join(" ")}: ${watching.lines.join("\n")}`).toBe(0)
      expect(watching.child.signalCode).toBeNull()
    }
  }, 60_000)

  it("reef kv put is one trace from the CLI through the replica to its consensus instance", async () => {
    expect((await reef(["kv", "put", "traced", "1"], { cwd: dir, env: tracing }).result()).code).toBe(0)
    const cliSpan = (s: ReceivedSpan) => s.name === "reef kv put" && s.kind === "client" && s.serviceName === "reef-cli"
    const spans = await Effect.runPromise(
      receiver
        .waitForSpans((all) => {
          const cli = all.find(cliSpan)
          return cli !== undefined && all.some((s) => s.traceId === cli.traceId && s.attributes["rpc.method"] === "Set")
        })
        .pipe(Effect.timeout("30 seconds"))
    )
    const cli = spans.find(cliSpan)!
    const set = spans.find(
      (s) => s.traceId === cli.traceId && s.kind === "server" && s.attributes["rpc.method"] === "Set"
    )
    expect(set?.serviceName).toBe("reef-replica")
    // The server span links to the consensus instance that decided the write.
    const instances = await Effect.runPromise(
      receiver
        .waitForSpans((all) =>
          all.some((s) => s.name.startsWith("popuc.instance ") && set!.links.some((l) => l.spanId === s.spanId))
        )
        .pipe(Effect.timeout("30 seconds"))
    )
    expect(instances.length).toBeGreaterThan(0)
  }, 90_000)

  it("metrics leave every actor over OTLP too", async () => {
    const points = await Effect.runPromise(
      receiver
        .waitForMetrics((ps) =>
          ps.some((p) => p.name === "reef_popuc_instances_decided_total" && p.serviceName === "reef-replica")
        )
        .pipe(Effect.timeout("30 seconds"))
    )
    expect(points.some((p) => p.name === "reef_actor_handled_total" && p.serviceName === "reef-counter")).toBe(true)
  }, 60_000)

  /** Every actor process's /metrics page, by `role/id`. */
  const scrapeAll = async () => {
    const file = JSON.parse(readFileSync(join(dir, ".reef", "cluster.json"), "utf8"))
    const pages = new Map<string, string>()
    for (const actor of file.actors as Array<{ role: string; id: string; endpoints: Record<string, string> }>) {
      if (actor.endpoints.metrics === undefined) continue
      pages.set(`${actor.role}/${actor.id}`, await (await fetch(actor.endpoints.metrics)).text())
    }
    return pages
  }

  it("Remora's and AirDB's processes export their own metrics", async () => {
    // A write through a1: a commit.
    await inCluster(["airdb", "put", "metrics-key", "1"])
    const pages = await scrapeAll()
    for (const [actor, lines] of [
      [
        "coordinator/x1",
        [
          /^reef_remora_admitted_total\{coordinator="x1"\} [1-9]\d*$/m,
          /^reef_remora_completed_total\{coordinator="x1"\} [1-9]\d*$/m,
          /^reef_remora_block_latency_ms_count\{coordinator="x1"\} [1-9]\d*$/m,
          /^reef_remora_dispatch_queue_transactions\{coordinator="x1"\} \d+$/m,
          /^reef_remora_worker_load\{coordinator="x1",worker="w1"\} [\d.e+-]+$/m,
          /^reef_remora_pool_size\{coordinator="x1",state="active"\} [1-9]\d*$/m,
          /^reef_remora_scaling_decisions_total\{coordinator="x1",decision="Spawn",reason="load-high"\} 0$/m
        ]
      ],
      ["worker/w1", [/^reef_remora_lease_transfers_total\{worker="w1"\} \d+$/m, /^reef_remora_worker_executed_total/m]],
      [
        "airdb/a1",
        [
          /^reef_airdb_aborts_total\{reason="conflict",store="airdb"\} \d+$/m,
          /^reef_airdb_tail_sync_ms_count\{store="airdb"\} \d+$/m,
          /^reef_airdb_unmaterialised_entries\{store="airdb"\} \d+$/m
        ]
      ]
    ] as const) {
      for (const line of lines) expect(pages.get(actor) ?? "", `${actor} /metrics`).toMatch(line)
    }
  })

  it("a replica's /metrics has the kernel's and POPUC's metrics", async () => {
    const page = (await scrapeAll()).get("replica/r1") ?? ""
    for (const line of [
      /^reef_actor_handled_total\{actor="replica\/r1"\} \d+$/m,
      /^reef_actor_mailbox_depth\{actor="nic\/r1"\} \d+$/m,
      /^reef_actor_handle_latency_ms_bucket\{actor="replica\/r1",le="\+Inf"\} \d+$/m,
      /^reef_popuc_instances_decided_total\{group="kv",replica="r1"\} [1-9]\d*$/m,
      /^reef_popuc_rounds_total\{group="kv",replica="r1"\} [1-9]\d*$/m,
      /^reef_popuc_self_quits_total\{group="kv",replica="r1"\} \d+$/m,
      /^reef_popuc_instance_duration_ms_count\{group="kv",replica="r1"\} [1-9]\d*$/m,
      /^reef_kv_request_duration_ms_count\{group="kv",op="set",replica="r1"\} \d+$/m,
      /^process_resident_memory_bytes \d+$/m
    ]) {
      expect(page).toMatch(line)
    }
  })

  it("every dashboard query names a metric that a running actor exports", async () => {
    const dashboard = JSON.parse(
      readFileSync(join(repoRoot, "observability", "grafana", "dashboards", "reef.json"), "utf8")
    )
    const exported = new Set([...(await scrapeAll()).values()].flatMap((page) => [...exportedSampleNames(page)]))
    const queries = dashboardQueries(dashboard)
    expect(queries.length).toBeGreaterThan(15)
    for (const { where, expr } of queries) {
      for (const metric of promqlMetricNames(expr)) {
        expect(exported.has(metric), `"${where}" reads ${metric}, which no running actor exports`).toBe(true)
      }
    }
  })

  const prometheus = spawnSync("prometheus", ["--version"]).status === 0

  it.runIf(prometheus)(
    "a real Prometheus scrapes every actor and evaluates every dashboard query",
    async () => {
      const [port] = await ports()
      const targets = join(dir, ".reef", "prometheus-targets.json")
      const config = join(dir, "prometheus.yml")
      writeFileSync(
        config,
        [
          "global: { scrape_interval: 1s, evaluation_interval: 1s }",
          "scrape_configs:",
          "  - job_name: reef",
          `    file_sd_configs: [{ files: [${JSON.stringify(targets)}], refresh_interval: 1s }]`,
          ""
        ].join("\n")
      )
      const server = spawn(
        "prometheus",
        [
          `--config.file=${config}`,
          `--storage.tsdb.path=${join(dir, "tsdb")}`,
          `--web.listen-address=127.0.0.1:${port}`,
          "--log.level=warn"
        ],
        { stdio: "ignore", detached: true }
      )
      running.push(server)
      const api = async (path: string) => {
        for (;;) {
          try {
            return (await (await fetch(`http://127.0.0.1:${port}/api/v1/${path}`)).json()) as any
          } catch {
            await new Promise((resolve) => setTimeout(resolve, 200))
          }
        }
      }
      // Every target scraped, at least a few times (rates need two samples).
      const expected = JSON.parse(readFileSync(targets, "utf8")).length
      for (;;) {
        const active = (await api("targets")).data?.activeTargets ?? []
        if (active.length === expected && active.every((t: any) => t.health === "up")) break
        await new Promise((resolve) => setTimeout(resolve, 250))
      }
      await new Promise((resolve) => setTimeout(resolve, 4_000))
      const dashboard = JSON.parse(
        readFileSync(join(repoRoot, "observability", "grafana", "dashboards", "reef.json"), "utf8")
      )
      for (const { where, expr } of dashboardQueries(dashboard)) {
        if (where.startsWith("variable")) {
          const metric = promqlMetricNames(expr)[0]!
          const values = await api(`label/cluster/values?match[]=${encodeURIComponent(metric)}`)
          expect(values.data, `${where}: ${expr}`).toContain("clitest")
          continue
        }
        const answer = await api(`query?query=${encodeURIComponent(withGrafanaVariables(expr))}`)
        expect(answer.status, `${where}: ${expr}\n${JSON.stringify(answer)}`).toBe("success")
        expect(answer.data.result.length, `${where}: ${expr} returned no series`).toBeGreaterThan(0)
      }
    },
    120_000
  )

  it("Ctrl-C says what it stops, stops every process and removes the cluster file", async () => {
    const file = JSON.parse(readFileSync(join(dir, ".reef", "cluster.json"), "utf8"))
    const pids = (file.actors as Array<{ pid: number }>).map((a) => a.pid).filter((pid) => pid > 0)
    expect(new Set(pids).size).toBe(13)
    up.child.kill("SIGINT")
    expect(await up.exited).toBe(0)
    const output = up.lines.join("\n")
    expect(output).toMatch(
      /Stopping 13 actor processes \(gateway gw1, counter c1 c2, replica r1 r2 r3, chain p1, backup b1, airdb a1, coordinator x1, worker w1 w2 w3\) and nats-server/
    )
    expect(output).toContain("Stopped.")
    for (const pid of pids) expect(() => process.kill(pid, 0), `pid ${pid}; ${output}`).toThrow()
    expect(existsSync(join(dir, ".reef", "cluster.json"))).toBe(false)
  }, 60_000)
})

describe("reef", () => {
  afterEach(() => {
    for (const child of running.splice(0)) killGroup(child)
  })

  it("reef up --workload runs the demo workload, checks it, prints results and exits 0", async () => {
    const dir = mkdtempSync(join(tmpdir(), "reef-cli-workload-"))
    const [natsPort, monitorPort, grpcPort, kvPort, metricsPort, executionPort, respPort] = await ports()
    const up = reef(
      [
        "up",
        "--workload",
        ...["--nats-port", String(natsPort), "--nats-monitor-port", String(monitorPort)],
        ...["--grpc-port", String(grpcPort), "--kv-port", String(kvPort), "--metrics-port", String(metricsPort)],
        ...["--execution-port", String(executionPort), "--resp-port", String(respPort)],
        ...["--cluster", "cliwork"]
      ],
      { cwd: dir }
    )
    // `reef up` bounds each of its phases itself; this watchdog only makes sure that a hang still shows the
    // output (a vitest timeout would not).
    const watchdog = setTimeout(() => killGroup(up.child), 200_000)
    const { code, output } = await up.result().finally(() => clearTimeout(watchdog))
    rmSync(dir, { recursive: true, force: true })
    expect(code, output).toBe(0)
    expect(output).toContain("Workload results")
    expect(output).toMatch(/batched tell .*counter = 100000 \(ok\)/)
    expect(output).toMatch(/hops c1@\d+ -> c2@\d+/)
    // Signed transactions through the coordinator's Submit stream, checked against the reference executor.
    expect(output).toMatch(/Remora YCSB, signed .* \d+ executed, \d+ bad signatures as no-ops, 0 rejected/)
    expect(output).toMatch(/Remora state hash vs reference\s+\d+\s+equal: [0-9a-f]{16}/)
  }, 210_000)

  it("reef run replica stops on SIGTERM while its engine still waits for peers that never come", async () => {
    const nats = await startNats(harness)
    const replica = reef(["run", "replica", "--id", "r1", "--members", "r1,r2,r3", "--nats", nats.url])
    await replica.waitForLine((l) => l.includes("waiting for engines"))
    replica.child.kill("SIGTERM")
    // Hung for good before: the engine's start was an uninterruptible acquire.
    expect(await replica.exited).not.toBeNull()
    expect(replica.child.signalCode).toBeNull()
  }, 60_000)
})

describe("reef up as a supervisor", () => {
  afterEach(() => {
    for (const child of running.splice(0)) killGroup(child)
  })

  const alive = (pid: number) => {
    try {
      process.kill(pid, 0)
      return true
    } catch {
      return false
    }
  }
  /** Polls `condition` every 100 ms until it holds; fails with `what` after `seconds`. */
  const until = async (what: string, condition: () => boolean | Promise<boolean>, seconds = 30) => {
    const deadline = Date.now() + seconds * 1000
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`not within ${seconds} s: ${what}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  it("keeps its own cluster file, reports a child's death, survives a closed stdout, and its children die with it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "reef-cli-supervisor-"))
    const [natsPort, monitorPort, grpcPort, , metricsPort] = await ports()
    // A cluster file not named cluster.json: Prometheus's targets go next to it, never over it.
    const clusterFile = join(dir, "my-cluster.json")
    const up = reef(
      [
        "up",
        ...["--replicas", "0", "--workers", "0", "--counters", "2", "--cluster", "clisup"],
        ...["--nats-port", String(natsPort), "--nats-monitor-port", String(monitorPort)],
        ...["--grpc-port", String(grpcPort), "--metrics-port", String(metricsPort)],
        ...["--cluster-file", clusterFile]
      ],
      { cwd: dir }
    )
    try {
      await up.waitForLine((l) => l.startsWith("Ctrl-C stops the cluster"))
      expect(up.lines.join("\n")).toContain(`Prometheus targets  ${join(dir, "my-cluster.prometheus-targets.json")}`)
      const status = await reef(["status", "--cluster-file", clusterFile, "--json"], { cwd: dir }).result()
      expect(status.code, status.output).toBe(0)
      expect(JSON.parse(status.output).members.length).toBe(3)
      const targets = JSON.parse(readFileSync(join(dir, "my-cluster.prometheus-targets.json"), "utf8"))
      expect(targets.length).toBe(3)
      const pidOf = (id: string) =>
        (JSON.parse(readFileSync(clusterFile, "utf8")).actors as Array<{ id: string; pid: number }>).find(
          (a) => a.id === id
        )!.pid

      // A child killed behind reef up's back is reported with how it ended and how to start it again.
      const c2 = pidOf("c2")
      process.kill(c2, "SIGKILL")
      await up.waitForLine((l) => l.startsWith(`counter/c2 (pid ${c2}) exited: killed by SIGKILL`))
      expect(up.lines.join("\n")).toContain("to start it again: reef run counter --id c2")

      // `reef up | head -3`: the reader goes away; reef up goes on without its output.
      const gateway = pidOf("gw1")
      const c1 = pidOf("c1")
      up.child.stdout!.destroy()
      process.kill(c1, "SIGKILL")
      await until("reef up rewrote its cluster file without c1", () =>
        (JSON.parse(readFileSync(clusterFile, "utf8")).actors as Array<{ id: string }>).every((a) => a.id !== "c1")
      )
      expect(up.child.exitCode, up.lines.join("\n")).toBeNull()

      // kill -9 of reef up: its children (the gateway, nats-server) go with it, freeing their ports.
      process.kill(up.child.pid!, "SIGKILL")
      await until("the gateway exits with its parent", () => !alive(gateway))
      await until("nats-server exits with its parent", () => Effect.runPromise(portFree(natsPort)).then((free) => free))
    } finally {
      killGroup(up.child)
      rmSync(dir, { recursive: true, force: true })
    }
  }, 180_000)
})
