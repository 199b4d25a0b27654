/**
 * A real etcd cluster of N members on loopback: the replicated peer the POPUC KV benchmark is
 * compared against, started in the same run on the same machine.
 *
 * Each member is an `etcd` process (apt `etcd-server`, 3.4.23) with its own client and peer port
 * (free ports found by binding port 0) and its own data directory, joined by a static
 * `--initial-cluster` (all members listed up front, `--initial-cluster-state new`, a unique cluster
 * token per start, so no discovery and no stale-member confusion between runs).
 *
 * Raft timing defaults to etcd's: `--heartbeat-interval 100` ms and `--election-timeout 1000` ms
 * (followers start an election after 1000–2000 ms without a heartbeat, randomised), so a leader kill
 * stalls writes for roughly 1–3 s, like a default production etcd. `raftTiming` sets both, e.g. 10 / 50 ms
 * to match a loopback-calibrated failure detector (the failover comparison reports both).
 *
 * `unsafeNoFsync` (default true) passes `--unsafe-no-fsync`: POPUC keeps its state in memory, so
 * the fair comparison is an etcd that does not wait for the disk either.
 *
 * Readiness and leadership come from each member's HTTP endpoints on its client port: `/health`
 * (true only with a leader and a successful quorum read, what `etcdctl endpoint health` checks) and
 * `/metrics` (`etcd_server_is_leader`), so no etcdctl process per probe.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { findBinary, killOnExit } from "@reef/devkit"
import { freePorts, procCpuSeconds, waitExit } from "./proc.js"

export interface EtcdClusterOptions {
  readonly n: number
  /** Pass `--unsafe-no-fsync` (default true: POPUC is in-memory). */
  readonly unsafeNoFsync?: boolean
  /** Parent of the members' data directories (default: a fresh temp dir, removed by `stop`). */
  readonly dataDir?: string
  /** How long to wait for every member to report healthy (default 20 s). */
  readonly startTimeoutMs?: number
  /** etcd `--log-level` (default "error"; member logs are kept in memory and shown on failure). */
  readonly logLevel?: "debug" | "info" | "warn" | "error"
  /** Raft heartbeat interval and election timeout in ms (default etcd's 100 / 1000). */
  readonly raftTiming?: { readonly heartbeatMs: number; readonly electionMs: number }
  /** Extra etcd flags for every member, e.g. ["--snapshot-count", "10000"]. */
  readonly extraArgs?: ReadonlyArray<string>
  /** Member i on a host of `@reef/devkit/hosts` instead of loopback (bench/src/hosts). */
  readonly placement?: (index: number) => EtcdPlacement
}

/** Where a member runs: its host's address (ports 2379 and 2380 there), how to run on it, its advertised peer URL. */
export interface EtcdPlacement {
  readonly address: string
  /** `ip netns exec <netns>`. */
  readonly prefix: ReadonlyArray<string>
  /** The URL the other members dial for this one (the link proxy's port for it). */
  readonly peerAdvertiseUrl: string
}

/** A placed member's ports on its host (each host has its own network namespace). */
export const ETCD_CLIENT_PORT = 2379
export const ETCD_PEER_PORT = 2380

export interface EtcdMember {
  readonly name: string
  readonly pid: number
  /** Client URL, e.g. http://127.0.0.1:40123 (what clientv3 and etcdctl take as an endpoint). */
  readonly endpoint: string
  readonly peerUrl: string
  readonly dataDir: string
}

export interface EtcdLeader {
  readonly name: string
  readonly pid: number
  readonly endpoint: string
}

export interface EtcdCluster {
  readonly n: number
  readonly unsafeNoFsync: boolean
  /** Client URLs of all members, in member order (including killed ones). */
  readonly endpoints: ReadonlyArray<string>
  readonly members: ReadonlyArray<EtcdMember>
  /** Member name → pid. */
  readonly pids: Readonly<Record<string, number>>
  /** Client URLs of members that have not exited. */
  liveEndpoints(): string[]
  /** The member that reports itself leader; waits (default 10 s) through an election. */
  leader(timeoutMs?: number): Promise<EtcdLeader>
  /** Signals one member (default SIGKILL, no goodbye); resolves once it has exited for SIGKILL/SIGTERM. */
  kill(name: string, signal?: NodeJS.Signals): Promise<void>
  /** Waits until every live member reports healthy. */
  waitHealthy(timeoutMs?: number): Promise<void>
  /** user+sys CPU seconds so far of each live member (from /proc). */
  cpuSeconds(): Record<string, number>
  /** Recent log output of a member (stderr, last 64 KiB). */
  logs(name: string): string
  /** Kills every member and removes the data directories. Idempotent. */
  stop(): Promise<void>
}

export const findEtcdBinary = (): string | undefined => findBinary("etcd", "ETCD_BIN", ["/usr/bin/etcd"])

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const fetchText = async (url: string, timeoutMs: number): Promise<{ ok: boolean; text: string }> => {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) })
    return { ok: response.ok, text: await response.text() }
  } catch (cause) {
    return { ok: false, text: String(cause) }
  }
}

/** Whether the member behind `endpoint` reports `{"health":"true"}` on /health. */
export const etcdMemberHealthy = async (endpoint: string, timeoutMs = 2000): Promise<boolean> => {
  const { ok, text } = await fetchText(`${endpoint}/health`, timeoutMs)
  return ok && /"health"\s*:\s*"true"/.test(text)
}

const isLeader = async (endpoint: string): Promise<boolean> => {
  const { ok, text } = await fetchText(`${endpoint}/metrics`, 1000)
  return ok && /^etcd_server_is_leader 1$/m.test(text)
}

interface Running {
  readonly member: EtcdMember
  readonly child: ChildProcess
  log: string
}

export const startEtcdCluster = async (options: EtcdClusterOptions): Promise<EtcdCluster> => {
  const { n } = options
  if (!Number.isInteger(n) || n < 1) throw new Error(`etcd cluster size must be a positive integer, got ${n}`)
  const binary = findEtcdBinary()
  if (binary === undefined) {
    throw new Error("etcd not found: apt-get install -y etcd-server (or bash bench/go/build.sh), or set ETCD_BIN")
  }
  const unsafeNoFsync = options.unsafeNoFsync ?? true
  const ownDir = options.dataDir === undefined
  const baseDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "reef-etcd-"))
  const token = `reef-${randomUUID()}`
  const ports = await freePorts(2 * n)
  const place = options.placement
  const members: EtcdMember[] = Array.from({ length: n }, (_, i) => ({
    name: `etcd-${i}`,
    pid: 0,
    endpoint:
      place === undefined ? `http://127.0.0.1:${ports[2 * i]}` : `http://${place(i).address}:${ETCD_CLIENT_PORT}`,
    peerUrl:
      place === undefined ? `http://127.0.0.1:${ports[2 * i + 1]}` : `http://${place(i).address}:${ETCD_PEER_PORT}`,
    dataDir: join(baseDir, `etcd-${i}`)
  }))
  const advertisedPeer = (i: number) => (place === undefined ? members[i]!.peerUrl : place(i).peerAdvertiseUrl)
  const initialCluster = members.map((m, i) => `${m.name}=${advertisedPeer(i)}`).join(",")

  const running: Running[] = []
  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    for (const r of running) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill("SIGKILL")
    await Promise.all(running.map((r) => waitExit(r.child)))
    if (ownDir) rmSync(baseDir, { recursive: true, force: true })
    else for (const m of members) rmSync(m.dataDir, { recursive: true, force: true })
  }

  try {
    for (const [i, m] of members.entries()) {
      rmSync(m.dataDir, { recursive: true, force: true })
      mkdirSync(m.dataDir, { recursive: true })
      const args = [
        "--name",
        m.name,
        "--data-dir",
        m.dataDir,
        "--listen-client-urls",
        m.endpoint,
        "--advertise-client-urls",
        m.endpoint,
        "--listen-peer-urls",
        m.peerUrl,
        "--initial-advertise-peer-urls",
        advertisedPeer(i),
        "--initial-cluster",
        initialCluster,
        "--initial-cluster-state",
        "new",
        "--initial-cluster-token",
        token,
        "--logger",
        "zap",
        "--log-outputs",
        "stderr",
        "--log-level",
        options.logLevel ?? "error",
        ...(unsafeNoFsync ? ["--unsafe-no-fsync"] : []),
        ...(options.raftTiming === undefined
          ? []
          : [
              "--heartbeat-interval",
              String(options.raftTiming.heartbeatMs),
              "--election-timeout",
              String(options.raftTiming.electionMs)
            ]),
        ...(options.extraArgs ?? [])
      ]
      // `ip netns exec` execs etcd: the child's pid is the member's.
      const [command, ...prefix] = place === undefined ? [binary] : [...place(i).prefix, binary]
      const child = killOnExit(spawn(command!, [...prefix, ...args], { stdio: ["ignore", "ignore", "pipe"] }))
      const r: Running = { member: { ...m, pid: child.pid ?? 0 }, child, log: "" }
      child.stderr?.on("data", (chunk: Buffer) => {
        r.log = (r.log + chunk.toString()).slice(-65_536)
      })
      child.on("error", (cause) => {
        r.log += `\nspawn error: ${cause}`
      })
      running.push(r)
    }

    const byName = (name: string): Running => {
      const r = running.find((x) => x.member.name === name)
      if (r === undefined) throw new Error(`no etcd member named ${name}`)
      return r
    }
    const alive = () => running.filter((r) => r.child.exitCode === null && r.child.signalCode === null)
    const describe = () =>
      running.map((r) => `--- ${r.member.name} (exit ${r.child.exitCode ?? r.child.signalCode}):\n${r.log}`).join("\n")

    const waitHealthy = async (timeoutMs = options.startTimeoutMs ?? 20_000) => {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const live = alive()
        if (live.length === 0) throw new Error(`no etcd member is running:\n${describe()}`)
        const health = await Promise.all(live.map((r) => etcdMemberHealthy(r.member.endpoint)))
        if (health.every(Boolean)) return
        if (Date.now() > deadline) throw new Error(`etcd cluster not healthy after ${timeoutMs} ms:\n${describe()}`)
        await sleep(100)
      }
    }

    const leader = async (timeoutMs = 10_000): Promise<EtcdLeader> => {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const live = alive()
        const flags = await Promise.all(live.map((r) => isLeader(r.member.endpoint)))
        const leaders = live.filter((_, i) => flags[i])
        if (leaders.length === 1) {
          const { name, pid, endpoint } = leaders[0]!.member
          return { name, pid, endpoint }
        }
        if (Date.now() > deadline) throw new Error(`no single etcd leader after ${timeoutMs} ms`)
        await sleep(50)
      }
    }

    await waitHealthy()

    return {
      n,
      unsafeNoFsync,
      endpoints: running.map((r) => r.member.endpoint),
      members: running.map((r) => r.member),
      pids: Object.fromEntries(running.map((r) => [r.member.name, r.member.pid])),
      liveEndpoints: () => alive().map((r) => r.member.endpoint),
      leader,
      kill: async (name, signal = "SIGKILL") => {
        const r = byName(name)
        if (r.child.exitCode !== null || r.child.signalCode !== null) return
        r.child.kill(signal)
        if (signal === "SIGKILL" || signal === "SIGTERM") await waitExit(r.child)
      },
      waitHealthy,
      cpuSeconds: () =>
        Object.fromEntries(
          alive().flatMap((r) => {
            const cpu = procCpuSeconds(r.member.pid)
            return cpu === undefined ? [] : [[r.member.name, cpu]]
          })
        ),
      logs: (name) => byName(name).log,
      stop
    }
  } catch (cause) {
    await stop()
    throw cause
  }
}
