/**
 * `--app redis`, the POPUC paper's design: 3 replica processes, each fronting its own redis-server. Hashes,
 * lists, sorted sets, streams and expiring keys written through different replicas leave the three Redis
 * instances with equal contents (DEBUG DIGEST); non-deterministic commands are refused; a replica killed and
 * restarted far behind (the peers keep a tiny decision log, so it gets a snapshot of their Redis) reaches the
 * same contents; and an ioredis GET/SET/INCR history with a replica killed mid-run is linearizable.
 */
import { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ActorProcess, makeHarness, startNats } from "./harness.js"
import { linearizableRun, readyAddress, run, startReplica, startReplicas } from "./redis-harness.js"

const harness = makeHarness()
afterAll(() => harness.close())

const MEMBERS = ["r1", "r2", "r3"]
/** A decision log this small sends a restarted replica a snapshot. */
const APP_ARGS = ["--app", "redis", "--log-bytes", "4096"]

describe("--app redis: replicated redis-server", () => {
  let natsUrl = ""
  let replicas = new Map<string, ActorProcess>()
  const ports = new Map<string, number>()
  const redisPorts = new Map<string, number>()
  const learn = (id: string, process: ActorProcess) => {
    replicas.set(id, process)
    ports.set(id, readyAddress(process, "resp").port)
    redisPorts.set(id, readyAddress(process, "redis").port)
  }

  beforeAll(async () => {
    natsUrl = (await startNats(harness)).url
    const started = await startReplicas(harness, { natsUrl, cluster: "redisapp", ids: MEMBERS, extraArgs: APP_ARGS })
    replicas = new Map()
    for (const [id, process] of started) learn(id, process)
  }, 240_000)

  const cli = async (id: string, ...args: Array<string>) =>
    (await run("redis-cli", ["-p", String(ports.get(id)), ...args])).stdout.trim()
  /** The contents of a replica's own redis-server, straight from it. */
  const digest = async (id: string) =>
    (await run("redis-cli", ["-p", String(redisPorts.get(id)), "DEBUG", "DIGEST"])).stdout.trim()
  const digests = () => Promise.all(MEMBERS.map(digest))
  /** Every replica has applied what was acknowledged: a read through each waits for a read barrier. */
  const settle = () => Promise.all(MEMBERS.map((id) => cli(id, "DBSIZE")))

  it("replicates a hash, a list, a sorted set, a stream and an expiring key into equal Redis contents", async () => {
    expect(await cli("r1", "HSET", "h", "f1", "v1", "f2", "v2")).toBe("2")
    expect(await cli("r2", "RPUSH", "l", "a", "b", "c")).toBe("3")
    expect(await cli("r3", "ZADD", "z", "1", "one", "2", "two")).toBe("2")
    expect(await cli("r1", "XADD", "s", "1-1", "f", "v")).toBe("1-1")
    expect(await cli("r2", "SET", "e", "x", "EX", "1000")).toBe("OK")
    expect(await cli("r3", "HGETALL", "h")).toBe("f1\nv1\nf2\nv2")
    expect(await cli("r1", "LRANGE", "l", "0", "-1")).toBe("a\nb\nc")
    expect(await cli("r2", "ZRANGE", "z", "0", "-1", "WITHSCORES")).toBe("one\n1\ntwo\n2")
    expect(Number(await cli("r3", "PTTL", "e"))).toBeGreaterThan(900_000)
    expect(await cli("r1", "TYPE", "h")).toBe("hash")
    expect(await cli("r2", "LPUSH", "h", "x")).toMatch(/^WRONGTYPE/)
    await settle()
    const [a, b, c] = await digests()
    expect(a).toMatch(/^[0-9a-f]{40}$/)
    expect(a).not.toBe("0".repeat(40))
    expect([b, c]).toEqual([a, a])
  })

  it("refuses what would make the replicas differ, saying why", async () => {
    expect(await cli("r1", "SADD", "set", "a", "b")).toBe("2")
    expect(await cli("r1", "SPOP", "set")).toMatch(/^ERR 'spop' is refused .*random/)
    expect(await cli("r2", "EVAL", "return redis.call('TIME')", "0")).toMatch(/^ERR 'eval' is refused/)
    expect(await cli("r3", "XADD", "s", "*", "f", "v")).toMatch(/^ERR XADD with an automatic id/)
    expect(await cli("r1", "BLPOP", "l", "1")).toMatch(/^ERR 'blpop' is refused/)
    expect(await cli("r1", "MULTI")).toMatch(/^ERR 'multi' is refused/)
    expect(await cli("r2", "SRANDMEMBER", "set")).toMatch(/^[ab]$/)
  })

  it("a replica killed and restarted far behind gets a snapshot and the same Redis contents", async () => {
    const victim = replicas.get("r3")!
    victim.child.kill("SIGKILL")
    await victim.exited
    // Well past the peers' 4 KiB decision log.
    const writer = new Redis({ port: ports.get("r1")!, lazyConnect: true })
    await writer.connect()
    for (let i = 0; i < 40; i++) {
      await writer.hset(`big${i % 5}`, `f${i}`, "v".repeat(200))
      await writer.zadd("rank", i, `m${i}`)
    }
    writer.disconnect()
    const restarted = await startReplica(harness, {
      natsUrl,
      cluster: "redisapp",
      ids: MEMBERS,
      id: "r3",
      extraArgs: APP_ARGS
    })
    learn("r3", restarted)
    expect(restarted.lines.join("\n")).toMatch(/restored the state of r[12] at instance \d+/)
    await settle()
    const [a, b, c] = await digests()
    expect([b, c]).toEqual([a, a])
    expect(await cli("r3", "ZCARD", "rank")).toBe("40")
  }, 240_000)

  it("ioredis: GET/SET/INCR through every replica, one killed mid-run, is linearizable", async () => {
    const checked = await linearizableRun({ ports, victim: replicas.get("r2")!, victimId: "r2", ops: 50 })
    expect(checked.operations).toBeGreaterThan(120)
    expect(checked.increments).toBeGreaterThan(10)
  }, 300_000)
})
