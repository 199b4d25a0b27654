/**
 * The replicas' Redis endpoint driven by clients nobody here wrote: redis-cli, ioredis and redis-benchmark,
 * against a group of 3 replica processes over a real nats-server (Reef's own KV state, no --app).
 *
 * - redis-cli writes through one replica and reads through another; RESP3 after HELLO 3.
 * - ioredis clients on every replica run GET / SET / INCR concurrently while one replica is killed with
 *   SIGKILL; the recorded history is checked for linearizability (linearizability.ts). A completed INCR that
 *   returned n is the compare-and-set n-1 → n on the register; INCRs go only through replicas that stay up,
 *   so none has an unknown outcome.
 * - redis-benchmark with a small -n, then the surviving replicas hold the same keys.
 */
import { execFile } from "node:child_process"
import { checkLinearizable, formatEntry, type HistoryEntry, HistoryRecorder } from "@reef/replica"
import { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ActorProcess, makeHarness, startActorProcess, startNats } from "./harness.js"

const harness = makeHarness()
afterAll(() => harness.close())

const MEMBERS = ["r1", "r2", "r3"]

const run = (file: string, args: ReadonlyArray<string>, timeoutMs = 120_000) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(file, args, { encoding: "utf8", timeout: timeoutMs }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : ((error as { code?: number }).code ?? 1), stdout, stderr })
    )
  )

const respPort = (process: ActorProcess) => {
  const line = process.lines.find((l) => l.includes("reef ready:")) ?? ""
  const port = / resp 127\.0\.0\.1:(\d+)/.exec(line)?.[1]
  if (port === undefined) throw new Error(`no resp address in: ${line}`)
  return Number(port)
}

describe("Redis clients against 3 replicas", () => {
  const replicas = new Map<string, ActorProcess>()
  const ports = new Map<string, number>()

  beforeAll(async () => {
    const nats = await startNats(harness)
    await Promise.all(
      MEMBERS.map(async (id) => {
        const process = await startActorProcess(harness, {
          role: "replica",
          id,
          natsUrl: nats.url,
          cluster: "redis",
          extraArgs: ["--members", MEMBERS.join(","), "--kv-port", "0", "--resp-port", "0"]
        })
        replicas.set(id, process)
        ports.set(id, respPort(process))
      })
    )
  }, 240_000)

  const cli = (id: string, ...args: Array<string>) => run("redis-cli", ["-p", String(ports.get(id)), ...args])

  it("redis-cli: SET on one replica, GET on another; RESP3 after HELLO 3", async () => {
    expect((await cli("r1", "SET", "a", "1")).stdout.trim()).toBe("OK")
    expect((await cli("r2", "GET", "a")).stdout.trim()).toBe("1")
    expect((await cli("r3", "INCR", "a")).stdout.trim()).toBe("2")
    expect((await cli("r1", "MGET", "a", "missing")).stdout.replace(/\n$/, "").split("\n")).toEqual(["2", ""])
    const hello = await cli("r2", "-3", "HELLO", "3")
    expect(hello.stdout).toMatch(/proto\s+3/)
    expect((await cli("r1", "HSET", "h", "f", "v")).stdout).toMatch(/^ERR unknown command 'HSET'/)
  })

  it("ioredis: concurrent GET/SET/INCR through every replica, one killed mid-run, is linearizable", async () => {
    const recorder = new HistoryRecorder()
    const increments: Array<HistoryEntry> = []
    const start = performance.now()
    const now = () => performance.now() - start
    const setup = new Redis({ port: ports.get("r1")!, lazyConnect: true })
    await setup.connect()
    await setup.set("c", "0")
    const setupDone = now()
    setup.disconnect()
    increments.push({
      process: "setup",
      op: { _tag: "Set", key: "c", value: "0", output: { ok: true } },
      invokeMs: 0,
      completeMs: setupDone
    })

    const OPS = 60
    let killed = false
    const client = async (process: string, replica: string) => {
      const redis = new Redis({
        port: ports.get(replica)!,
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        enableOfflineQueue: false,
        retryStrategy: () => null
      })
      await redis.connect()
      redis.on("error", () => {})
      let ops = 0
      for (let i = 0; i < OPS; i++) {
        const key = `k${i % 3}`
        const choice = (i * 7 + process.length) % 3
        ops++
        if (choice === 2 && replica !== "r3") {
          const invokeMs = now()
          const n = await redis.incr("c")
          increments.push({
            process,
            op: { _tag: "Cas", key: "c", expected: String(n - 1), value: String(n), output: { swapped: true } },
            invokeMs,
            completeMs: now()
          })
          continue
        }
        if (choice === 0) {
          const value = `${process}-${i}`
          const id = recorder.invoke(process, { _tag: "Set", key, value }, now())
          try {
            await redis.set(key, value)
            recorder.complete(id, { ok: true }, now())
          } catch (error) {
            // Never sent (the connection was gone): definite. Sent and unanswered: unknown.
            recorder.fail(id, !/enableOfflineQueue|writeable/i.test(String(error)))
            if (killed && replica === "r3") break
          }
        } else {
          const id = recorder.invoke(process, { _tag: "Get", key }, now())
          try {
            const value = await redis.get(key)
            recorder.complete(id, value === null ? { found: false } : { found: true, value }, now())
          } catch {
            recorder.fail(id, true)
            if (killed && replica === "r3") break
          }
        }
      }
      redis.disconnect()
      return ops
    }
    const clients = MEMBERS.flatMap((replica) => [client(`${replica}a`, replica), client(`${replica}b`, replica)])
    // Kill r3 once a third of the operations are recorded.
    const killer = (async () => {
      while (recorder.entries().length < (OPS * 6) / 3) await new Promise((r) => setTimeout(r, 20))
      killed = true
      replicas.get("r3")!.child.kill("SIGKILL")
      await replicas.get("r3")!.exited
    })()
    await Promise.all([...clients, killer])

    const history = [...recorder.entries(), ...increments]
    const result = checkLinearizable(history)
    if (!result.ok) {
      throw new Error(
        `${result._tag} on ${result.key}: ${result.reason}\n${result.minimalWindow.map(formatEntry).join("\n")}`
      )
    }
    expect(result.operations).toBeGreaterThan(OPS * 3)
    expect(increments.length).toBeGreaterThan(10)
  }, 300_000)

  it("redis-benchmark with a small -n, then the live replicas hold the same keys", async () => {
    const bench = await run(
      "redis-benchmark",
      [
        "-p",
        String(ports.get("r1")),
        "-t",
        "set,get",
        "-n",
        "2000",
        "-c",
        "20",
        "-P",
        "4",
        "-d",
        "64",
        "-r",
        "500",
        "-q"
      ],
      240_000
    )
    expect(bench.code, bench.stderr).toBe(0)
    expect(bench.stdout).toMatch(/SET: [\d.]+ requests per second/)
    expect(bench.stdout).toMatch(/GET: [\d.]+ requests per second/)
    const keys = async (id: string) => {
      const redis = new Redis({ port: ports.get(id)!, lazyConnect: true })
      await redis.connect()
      const size = await redis.dbsize()
      const values = await redis.mget(Array.from({ length: 500 }, (_, i) => `key:${String(i).padStart(12, "0")}`))
      redis.disconnect()
      return { size, values }
    }
    const [one, two] = [await keys("r1"), await keys("r2")]
    expect(one.size).toBeGreaterThan(0)
    expect(two).toEqual(one)
  }, 300_000)
})
