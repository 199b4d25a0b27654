/** Smoke test: a non-persistent redis-server on a free port, a short SET then GET redis-benchmark. */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RedisServer, runRedisLoad, startRedis } from "./redis.js"

describe("redis peer", () => {
  let redis: RedisServer | undefined

  beforeAll(async () => {
    redis = await startRedis()
  })

  afterAll(async () => {
    await redis?.stop()
  })

  it("runs SET and GET loads via redis-benchmark", async () => {
    const { port, pid } = redis!
    for (const op of ["set", "get"] as const) {
      const r = await runRedisLoad({ port, op, concurrency: 16, requests: 5000, valueSize: 64, serverPid: pid })
      expect(r.throughputPerSec).toBeGreaterThan(0)
      expect(r.p50Ms).toBeGreaterThan(0)
      expect(r.p99Ms).toBeGreaterThanOrEqual(r.p50Ms)
      expect(r.clientCpuSeconds).toBeGreaterThan(0)
      expect(r.serverCpuSeconds).toBeGreaterThanOrEqual(0)
    }
  })
})
