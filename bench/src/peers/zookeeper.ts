/**
 * Native ZooKeeper, the POPUC paper's other replicated peer: an ensemble of `n` servers from Debian's
 * `zookeeper` package (`REEF_BENCH_PEERS=1 bash scripts/bootstrap.sh` installs it) on loopback, each its own
 * JVM, with `zookeeper.forceSync=no` (Reef-Redis and etcd --unsafe-no-fsync do not sync to disk either). It is
 * driven by ZooKeeper's own Java client (bench/java/ZkLoad.java, compiled once per version of its source):
 * SET is setData, GET is sync + getData, ZooKeeper's consistent read.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { freePorts, waitExit } from "./proc.js"

const ZOOKEEPER_JAR = "/usr/share/java/zookeeper.jar"
const CLASSPATH = `/etc/zookeeper/conf:${ZOOKEEPER_JAR}`
const SOURCE = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "java", "ZkLoad.java")

/** Debian's zookeeper and a JDK (javac) are installed. */
export const zookeeperAvailable = (): boolean =>
  existsSync(ZOOKEEPER_JAR) && existsSync("/usr/bin/javac") && existsSync(SOURCE)

export interface ZooKeeperEnsemble {
  /** The client connect string: every server. */
  readonly connect: string
  readonly stop: () => Promise<void>
}

/** A server's answer to a four-letter command (`srvr`), or undefined when it does not answer. */
const fourLetter = (port: number, command: string) =>
  new Promise<string | undefined>((done) => {
    const socket = connect(port, "127.0.0.1")
    let text = ""
    socket.setTimeout(2_000, () => socket.destroy())
    socket.on("connect", () => socket.write(command))
    socket.on("data", (chunk) => {
      text += chunk.toString()
    })
    socket.on("close", () => done(text === "" ? undefined : text))
    socket.on("error", () => done(undefined))
  })

export const startZooKeeperEnsemble = async (n: number): Promise<ZooKeeperEnsemble> => {
  const ports = await freePorts(3 * n)
  const root = mkdtempSync(join(tmpdir(), `reef-zk${n}-`))
  const servers = Array.from({ length: n }, (_, i) => ({
    id: i + 1,
    client: ports[3 * i]!,
    quorum: ports[3 * i + 1]!,
    election: ports[3 * i + 2]!
  }))
  const children: Array<ChildProcess> = []
  const stop = async () => {
    for (const child of children) child.kill("SIGKILL")
    await Promise.all(children.map(waitExit))
    rmSync(root, { recursive: true, force: true })
  }
  try {
    for (const server of servers) {
      const dir = join(root, `s${server.id}`)
      mkdirSync(dir, { recursive: true })
      writeFileSync(join(dir, "myid"), `${server.id}\n`)
      const config = [
        "tickTime=500",
        "initLimit=20",
        "syncLimit=10",
        `dataDir=${dir}`,
        `clientPort=${server.client}`,
        "clientPortAddress=127.0.0.1",
        "maxClientCnxns=0",
        "admin.enableServer=false",
        "4lw.commands.whitelist=srvr,ruok",
        ...servers.map((s) => `server.${s.id}=127.0.0.1:${s.quorum}:${s.election}`)
      ]
      writeFileSync(join(dir, "zoo.cfg"), `${config.join("\n")}\n`)
      children.push(
        spawn(
          "java",
          [
            "-Xmx256m",
            "-Dzookeeper.forceSync=no",
            `-Dzookeeper.log.dir=${dir}`,
            "-cp",
            CLASSPATH,
            "org.apache.zookeeper.server.quorum.QuorumPeerMain",
            join(dir, "zoo.cfg")
          ],
          { stdio: ["ignore", "ignore", "ignore"] }
        )
      )
    }
    // Serving once every server says it is the leader or a follower.
    const deadline = Date.now() + 90_000
    for (const server of servers) {
      for (;;) {
        const answer = await fourLetter(server.client, "srvr")
        if (answer !== undefined && /Mode: (leader|follower)/.test(answer)) break
        if (Date.now() > deadline) throw new Error(`ZooKeeper server ${server.id} of ${n} did not join in 90 s`)
        await new Promise((r) => setTimeout(r, 200))
      }
    }
  } catch (error) {
    await stop()
    throw error
  }
  return { connect: servers.map((s) => `127.0.0.1:${s.client}`).join(","), stop }
}

let compiled: Promise<string> | undefined

/** The directory of ZkLoad's classes, compiled once per version of its source. */
const compileZkLoad = (): Promise<string> => {
  compiled ??= new Promise((done, fail) => {
    const hash = createHash("sha256").update(readFileSync(SOURCE)).digest("hex").slice(0, 12)
    const out = join(process.env.REEF_GO_BIN_DIR ?? join(tmpdir(), "reef-bench-go"), `zkload-${hash}`)
    if (existsSync(join(out, "ZkLoad.class"))) return done(out)
    execFile("javac", ["-cp", ZOOKEEPER_JAR, "-d", out, SOURCE], (error, _stdout, stderr) =>
      error === null ? done(out) : fail(new Error(`javac ZkLoad.java: ${stderr}`))
    )
  })
  return compiled
}

export interface ZkPhase {
  readonly op: "set" | "get"
  readonly inFlight: number
}

/** Runs the phases one after another on one client; their rates (/s), in order. */
export const runZkLoad = async (
  ensemble: ZooKeeperEnsemble,
  options: {
    readonly phases: ReadonlyArray<ZkPhase>
    readonly durationMs: number
    readonly valueBytes: number
    readonly keys: number
  }
): Promise<Array<number>> => {
  const classes = await compileZkLoad()
  const args = [
    "-Xmx512m",
    "-cp",
    `${ZOOKEEPER_JAR}:${classes}`,
    "ZkLoad",
    ensemble.connect,
    String(options.durationMs),
    String(options.valueBytes),
    String(options.keys),
    ...options.phases.map((p) => `${p.op}:${p.inFlight}`)
  ]
  const stdout = await new Promise<string>((done, fail) =>
    execFile("java", args, { encoding: "utf8", timeout: 300_000 }, (error, out, stderr) =>
      error === null ? done(out) : fail(new Error(`ZkLoad failed: ${error.message}\n${stderr.slice(-2000)}`))
    )
  )
  const lines = stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { throughputPerSec: number; errors: number })
  if (lines.length !== options.phases.length) throw new Error(`ZkLoad printed ${lines.length} results:\n${stdout}`)
  return lines.map((l) => l.throughputPerSec)
}
