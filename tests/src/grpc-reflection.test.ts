/**
 * Every role that serves gRPC describes itself through server reflection well enough for a client that has no
 * .proto file: a Go client on grpc-go and protobuf-go (tests/go/grpcreflect, built offline from Debian's
 * sources, as grpcurl is built on them) lists each server's services, fetches the files that define them and
 * their imports by name, and builds them into a fresh registry with protodesc, which checks every file as protoc
 * does. The roles run as real processes (`reef run <role>`) over a spawned nats-server.
 *
 * The same client refuses the descriptors proto-loader rebuilds from the .proto files (what the servers used to
 * serve: `reserved 4;` as the range (4, 4), every file merged into one `reef_v1.proto`), so this check fails on
 * the fault it is about.
 */
import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Server, ServerCredentials } from "@grpc/grpc-js"
import { loadSync } from "@grpc/proto-loader"
import { ReflectionService } from "@grpc/reflection"
import { protoRoot } from "@reef/proto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ActorProcess, makeHarness, startActorProcess, startNats } from "./harness.js"

const harness = makeHarness()
const work = mkdtempSync(join(tmpdir(), "reef-reflection-"))
afterAll(async () => {
  await harness.close()
  rmSync(work, { recursive: true, force: true })
})

const run = (file: string, args: ReadonlyArray<string>, options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}) =>
  new Promise<{ ok: boolean; stdout: string; stderr: string }>((resolve) =>
    execFile(file, args, { encoding: "utf8", timeout: 600_000, ...options }, (error, stdout, stderr) =>
      resolve({ ok: error === null, stdout, stderr: error === null ? stderr : `${error.message}\n${stderr}` })
    )
  )

/**
 * The client's binary, built once per version of its source (GOPATH mode against /usr/share/gocode: no module
 * proxy; Debian's golang-google-grpc-dev and golang-google-protobuf-dev, which scripts/bootstrap.sh installs).
 */
const buildClient = async (): Promise<string> => {
  const source = join(dirname(fileURLToPath(import.meta.url)), "..", "go", "grpcreflect")
  const hash = createHash("sha256")
    .update(readFileSync(join(source, "main.go")))
    .digest("hex")
    .slice(0, 12)
  const dir = join(process.env.REEF_GO_BIN_DIR ?? join(tmpdir(), "reef-tests-go"))
  const binary = join(dir, `grpcreflect-${hash}`)
  if (existsSync(binary)) return binary
  mkdirSync(dir, { recursive: true })
  const gopath = mkdtempSync(join(tmpdir(), "reef-gopath-"))
  const built = await run("go", ["build", "-o", binary, "."], {
    cwd: source,
    env: {
      ...process.env,
      GO111MODULE: "off",
      GOPATH: `${gopath}:/usr/share/gocode`,
      GOFLAGS: "",
      GOPROXY: "off",
      CGO_ENABLED: "0"
    }
  })
  rmSync(gopath, { recursive: true, force: true })
  if (!built.ok) throw new Error(`building tests/go/grpcreflect (scripts/bootstrap.sh installs Go): ${built.stderr}`)
  return binary
}

interface Described {
  readonly implementation: string
  /** Each file's SHA-256, by name. */
  readonly files: Record<string, string>
  readonly services: Record<string, ReadonlyArray<readonly [string, string, string]>>
}

let client = ""
const describeServer = async (
  address: string
): Promise<{ ok: true; described: Described } | { ok: false; error: string }> => {
  const result = await run(client, [address])
  return result.ok
    ? { ok: true, described: JSON.parse(result.stdout) as Described }
    : { ok: false, error: `${result.stderr}${result.stdout}` }
}

const ADDRESS = /127\.0\.0\.1:\d+/

const roles: ReadonlyArray<{
  readonly role: string
  readonly id: string
  readonly args: (dir: string) => ReadonlyArray<string>
  readonly service: string
  readonly file: string
}> = [
  {
    role: "gateway",
    id: "gw1",
    args: () => ["--grpc-port", "0"],
    service: "reef.v1.Cluster",
    file: "reef/v1/cluster.proto"
  },
  {
    role: "replica",
    id: "r1",
    args: () => ["--members", "r1", "--kv-port", "0"],
    service: "reef.v1.KV",
    file: "reef/v1/kv.proto"
  },
  {
    role: "coordinator",
    id: "x1",
    args: () => ["--execution-port", "0", "--in-memory"],
    service: "reef.v1.Execution",
    file: "reef/v1/execution.proto"
  },
  { role: "airdb", id: "a1", args: () => ["--grpc-port", "0"], service: "reef.v1.AirDB", file: "reef/v1/airdb.proto" },
  {
    role: "backup",
    id: "b1",
    args: (dir) => ["--grpc-port", "0", "--chain", "reflect", "--db", join(dir, "backup")],
    service: "reef.v1.Backup",
    file: "reef/v1/backup.proto"
  }
]

describe("gRPC server reflection, read by a Go client with no .proto file", () => {
  const processes = new Map<string, ActorProcess>()
  const served = new Map<string, Record<string, string>>()

  /** The gRPC address in the process's ready line (the first address it names). */
  const addressOf = (role: string) => {
    const lines = processes.get(role)!.lines
    const address = lines.find((line) => line.includes("reef ready:"))?.match(ADDRESS)?.[0]
    if (address === undefined) throw new Error(`no address in ${role}'s ready line:\n${lines.join("\n")}`)
    return address
  }

  beforeAll(async () => {
    client = await buildClient()
    const nats = await startNats(harness)
    // A backup follows a chain primary's streams: one that stops after its first block.
    await startActorProcess(harness, {
      role: "chain",
      id: "p1",
      natsUrl: nats.url,
      cluster: "reflect",
      extraArgs: ["--chain", "reflect", "--db", join(work, "chain"), "--block-ms", "0", "--max-blocks", "1"]
    })
    for (const role of roles) {
      processes.set(
        role.role,
        await startActorProcess(harness, {
          role: role.role,
          id: role.id,
          natsUrl: nats.url,
          cluster: "reflect",
          extraArgs: role.args(work)
        })
      )
    }
  }, 600_000)

  for (const role of roles) {
    it(`${role.role}: ${role.service} builds into a fresh descriptor pool`, async () => {
      const result = await describeServer(addressOf(role.role))
      if (!result.ok) throw new Error(`${role.role}: ${result.error}`)
      const { described } = result
      expect(Object.keys(described.services).sort()).toEqual([role.service, "grpc.health.v1.Health"].sort())
      expect(described.services[role.service]!.length).toBeGreaterThan(0)
      // One file per .proto under its real name, with its imports, never a merged `reef_v1.proto`.
      const files = Object.keys(described.files)
      expect(files).toContain(role.file)
      expect(files).toContain("grpc/health/v1/health.proto")
      expect(files.every((file) => file.startsWith("reef/v1/") || file.startsWith("grpc/"))).toBe(true)
      served.set(role.role, described.files)
    })
  }

  it("every server describes a file it shares with another identically", () => {
    expect([...served.keys()].sort()).toEqual(roles.map((r) => r.role).sort())
    const digests = new Map<string, Set<string>>()
    for (const files of served.values()) {
      for (const [file, digest] of Object.entries(files))
        digests.set(file, (digests.get(file) ?? new Set()).add(digest))
    }
    expect([...digests].filter(([, seen]) => seen.size > 1).map(([file]) => file)).toEqual([])
  })

  it("refuses descriptors rebuilt by proto-loader (reserved 4 sent as the range (4, 4))", async () => {
    const server = new Server()
    new ReflectionService(loadSync(["reef/v1/kv.proto"], { includeDirs: [protoRoot] })).addToServer(server)
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, port) =>
        error === null ? resolve(port) : reject(error)
      )
    )
    try {
      const result = await describeServer(`127.0.0.1:${port}`)
      expect(result.ok).toBe(false)
      if (!result.ok) expect(result.error).toMatch(/reserved ranges has invalid range: 4 to 3/)
    } finally {
      server.forceShutdown()
    }
  })
})
