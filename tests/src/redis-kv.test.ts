/**
 * The replicas' Redis endpoint driven by clients nobody here wrote: redis-cli, ioredis and redis-benchmark,
 * against a group of 3 replica processes over a real nats-server (Reef's own KV state, no --app).
 *
 * - redis-cli writes through one replica and reads through another; RESP3 after HELLO 3.
 * - ioredis clients on every replica run GET / SET / INCR concurrently while one replica is killed with
 *   SIGKILL; the recorded history is checked for linearizability (redis-harness.ts).
 * - redis-benchmark with a small -n, then the surviving replicas hold the same keys.
 */

import { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ActorProcess } from "./harness.js"
import { makeHarness, startNats } from "./harness.js"
import { linearizableRun, readyAddress, run, startReplicas } from "./redis-harness.js"

const harness = makeHarness()
afterAll(() => harness.close())

const MEMBERS = ["r1", "r2", "r3"]

describe("Redis clients against 3 replicas", () => {
  let replicas = new Map<string, ActorProcess>()
  const ports = new Map<string, number>()

  beforeAll(async () => {
    const nats = await startNats(harness)
    replicas = await startReplicas(harness, { natsUrl: nats.url, cluster: "redis", ids: MEMBERS })
    for (const [id, process] of replicas) ports.set(id, readyAddress(process, "resp").port)
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
    const checked = await linearizableRun({ ports, victim: replicas.get("r3")!, victimId: "r3", ops: 60 })
    expect(checked.operations).toBeGreaterThan(150)
    expect(checked.increments).toBeGreaterThan(10)
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
