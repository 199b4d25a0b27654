import { Client, credentials, type ServiceError } from "@grpc/grpc-js"
import { GrpcCode, serveGrpc } from "@reef/grpc"
import { AirDBClient } from "@reef/proto"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { openClient } from "../client/client.js"
import { MemorySegments, makeMemorySegmentStore } from "../segment/memory.js"
import { AIRDB_MAX_TRANSACTION_OPS, airDbGrpcService } from "./airdb-service.js"

const scope = Effect.runSync(Scope.make())
let client: InstanceType<typeof AirDBClient>
let address = ""

beforeAll(async () => {
  address = await Effect.runPromise(
    Scope.extend(
      Effect.gen(function* () {
        const db = yield* openClient(makeMemorySegmentStore(new MemorySegments()), { store: "g", minSyncGapMs: 1 })
        return (yield* serveGrpc({ port: 0, services: [airDbGrpcService(db)] })).address
      }),
      scope
    )
  )
  client = new AirDBClient(address, credentials.createInsecure())
})
afterAll(async () => {
  client?.close()
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

const call = <Req, Res>(method: (req: Req, cb: (e: ServiceError | null, r: Res) => void) => unknown, req: Req) =>
  new Promise<Res>((resolve, reject) => method.call(client, req, (e, r) => (e ? reject(e) : resolve(r))))
const b = (s: string) => Buffer.from(s)

describe("reef.v1.AirDB over gRPC", () => {
  it("puts, gets, scans and runs a transaction with reads, writes and a compare", async () => {
    await call(client.put, { key: b("a"), value: b("1") })
    await call(client.put, { key: b("b"), value: b("2") })
    expect(await call(client.get, { key: b("a") })).toMatchObject({ found: true, value: b("1") })
    expect(await call(client.get, { key: b("zz") })).toMatchObject({ found: false })
    const t = await call(client.transact, {
      ops: [
        { op: { $case: "compare", value: { key: b("a"), exists: true, value: b("1") } } },
        { op: { $case: "read", value: { key: b("b") } } },
        { op: { $case: "put", value: { key: b("c"), value: b("3") } } },
        { op: { $case: "delete", value: { key: b("b") } } }
      ],
      maxAttempts: 0
    })
    expect(t).toMatchObject({
      committed: true,
      failedCompare: -1,
      reads: [{ key: b("b"), found: true, value: b("2") }]
    })
    const failed = await call(client.transact, {
      ops: [
        { op: { $case: "compare", value: { key: b("a"), exists: false, value: b("") } } },
        { op: { $case: "put", value: { key: b("d"), value: b("4") } } }
      ],
      maxAttempts: 0
    })
    expect(failed).toMatchObject({ committed: false, failedCompare: 0 })
    const scan = (await call(client.scan, { start: b(""), end: b(""), limit: 0 })) as { items: Array<{ key: Buffer }> }
    expect(scan.items.map((i: { key: Buffer }) => i.key.toString())).toEqual(["a", "c"])
  })

  it("refuses bad keys and values with INVALID_ARGUMENT and a reason", async () => {
    for (const request of [
      { key: Buffer.from([0xff, 0xfe]), value: b("x") },
      { key: b(""), value: b("x") },
      { key: b("k"), value: Buffer.alloc(300 * 1024) }
    ]) {
      const e = (await call(client.put, request).catch((x) => x)) as ServiceError
      expect(e.code).toBe(GrpcCode.INVALID_ARGUMENT)
      expect(e.details).toMatch(/UTF-8|empty key|exceeds/)
    }
  })

  it("refuses a key written twice in one transaction (etcd's rule), naming both operations", async () => {
    for (const second of [
      { op: { $case: "put" as const, value: { key: b("dup"), value: b("2") } } },
      { op: { $case: "delete" as const, value: { key: b("dup") } } }
    ]) {
      const e = (await call(client.transact, {
        ops: [{ op: { $case: "put", value: { key: b("dup"), value: b("1") } } }, second],
        maxAttempts: 0
      }).catch((x) => x)) as ServiceError
      expect(e.code).toBe(GrpcCode.INVALID_ARGUMENT)
      expect(e.details).toMatch(/"dup" is already written by ops\[0\]/)
    }
    expect(await call(client.get, { key: b("dup") })).toMatchObject({ found: false })
    // Reads and compares of a key the request wrote see the write (read-your-writes).
    const t = await call(client.transact, {
      ops: [
        { op: { $case: "put", value: { key: b("ryw"), value: b("1") } } },
        { op: { $case: "compare", value: { key: b("ryw"), exists: true, value: b("1") } } },
        { op: { $case: "read", value: { key: b("ryw") } } }
      ],
      maxAttempts: 0
    })
    expect(t).toMatchObject({ committed: true, reads: [{ found: true, value: b("1") }] })
  })

  it("refuses a transaction of more than AIRDB_MAX_TRANSACTION_OPS operations", async () => {
    const ops = Array.from({ length: AIRDB_MAX_TRANSACTION_OPS + 1 }, (_, i) => ({
      op: { $case: "read" as const, value: { key: b(`r${i}`) } }
    }))
    const e = (await call(client.transact, { ops, maxAttempts: 0 }).catch((x) => x)) as ServiceError
    expect(e.code).toBe(GrpcCode.INVALID_ARGUMENT)
    expect(e.details).toMatch(/at most 1024/)
    const ok = await call(client.transact, { ops: ops.slice(1), maxAttempts: 0 })
    expect(ok).toMatchObject({ committed: true })
  })

  it("answers bytes that are not a request message with INVALID_ARGUMENT", async () => {
    const raw = new Client(address, credentials.createInsecure())
    const garbage = Buffer.from([0x0a, 0xff, 0x01])
    for (const method of ["Get", "Transact"]) {
      const e = await new Promise<ServiceError>((resolve) =>
        raw.makeUnaryRequest(
          `/reef.v1.AirDB/${method}`,
          (x: Buffer) => x,
          (x: Buffer) => x,
          garbage,
          (error) => resolve(error as ServiceError)
        )
      )
      expect(e?.code, `${method}: ${e?.details}`).toBe(GrpcCode.INVALID_ARGUMENT)
    }
    raw.close()
  })
})
