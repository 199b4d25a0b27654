/**
 * One load process of the AirDB benchmark (a separate OS process, so clients do not share an event loop):
 *
 *   - `load`: runs a YCSB mix for a duration, closed-loop with `concurrency` workers or paced to `rate`, against
 *     an embedded AirDB client (the paper's deployment) or SLSMR servers over gRPC; prints one JSON result;
 *   - `fill`: writes keys [from, to) in transactions of `batch` puts (dataset loading);
 *   - `coldstart`: opens a client on an existing store and commits one transaction; prints how long that took
 *     from the moment the parent spawned this process (node's own start included).
 *
 *   node bench/dist/airdb/load-process.js '<json LoadSpec>'
 */
import { randomBytes } from "node:crypto"
import { credentials, type ServiceError } from "@grpc/grpc-js"
import { type AirDbClient, openClient, openSegmentStore, type StorageOptions, withFailures } from "@reef/airdb/client"
import { AirDBClient } from "@reef/proto"
import * as Effect from "effect/Effect"
import { encodeHistogram, newHistogram, recordMs, summarize } from "../harness/histogram.js"
import { keyName, MIXES, type OpKind, opFor, VALUE_BYTES, type Workload } from "./ycsb.js"

export type LoadTarget =
  | {
      readonly kind: "airdb"
      readonly storage: StorageOptions
      readonly store: string
      readonly cacheBytes?: number
      /** Share of this client's storage calls that fail (chaos). */
      readonly failureRate?: number
    }
  | { readonly kind: "grpc"; readonly addresses: ReadonlyArray<string> }

export interface LoadSpec {
  readonly mode: "load" | "fill" | "coldstart"
  readonly target: LoadTarget
  readonly workload?: Workload
  readonly concurrency?: number
  readonly durationMs?: number
  readonly warmupMs?: number
  readonly keySpace?: number
  /** Total operations per second over all workers (0: closed loop). */
  readonly rate?: number
  /** Latency bound of a successful operation (chaos: within SLA or late). */
  readonly slaMs?: number
  /** An operation still failing after this long counts as unreachable. */
  readonly giveUpMs?: number
  /** Distinct insert keys per process. */
  readonly insertBase?: number
  readonly fill?: { readonly from: number; readonly to: number; readonly batch: number }
  /** Wall-clock ms when the parent spawned this process (cold start). */
  readonly spawnedAt?: number
}

export interface LoadOutput {
  readonly ops: number
  readonly errors: number
  readonly seconds: number
  readonly throughput: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly maxMs: number
  /** Every successful operation's latency: an hdr histogram, compressed base64 (merged across processes). */
  readonly histogram: string
  /** Completions per 100 ms. */
  readonly timeline100ms: ReadonlyArray<number>
  /** Chaos: operations within the SLA, late, and never answered. */
  readonly withinSla: number
  readonly late: number
  readonly unreachable: number
  readonly aborts: number
  readonly clientStats?: Record<string, number>
}

/**
 * What a load process drives. Operations are effects that the workers (one long-lived fiber each, as etcdload's
 * workers are goroutines) run in a loop: no fiber or promise is made per operation.
 */
interface Target {
  readonly op: (kind: OpKind, key: string, value: Uint8Array) => Effect.Effect<void, unknown>
  readonly put: (entries: ReadonlyArray<readonly [string, Uint8Array]>) => Effect.Effect<void, unknown>
  readonly stats: () => Record<string, number> | undefined
}

const tagOf = (e: unknown): string | undefined => (e as { _tag?: string } | undefined)?._tag

/** A copy of `old` with its first byte incremented: the "modify" of read-modify-write. */
const bumped = (old: Uint8Array): Uint8Array => {
  const next = Uint8Array.from(old)
  if (next.byteLength > 0) next[0] = (next[0]! + 1) & 0xff
  return next
}

const airdbTarget = (t: Extract<LoadTarget, { kind: "airdb" }>, client: AirDbClient): Target => ({
  op: (kind, key, value) => {
    switch (kind) {
      case "read":
        return Effect.asVoid(client.get(key))
      case "update":
      case "insert":
        return Effect.asVoid(client.put(key, value))
      case "rmw":
        return Effect.asVoid(
          client.transact((tx) =>
            // Values read are the client's own: derive a new one rather than changing it in place.
            Effect.flatMap(tx.get(key), (old) => tx.put(key, old === undefined ? value : bumped(old)))
          )
        )
    }
  },
  put: (entries) =>
    Effect.asVoid(client.transact((tx) => Effect.forEach(entries, ([k, v]) => tx.put(k, v), { discard: true }))),
  stats: () => ({ ...client.stats(), cacheCapacity: t.cacheBytes ?? 0 })
})

const grpcTarget = (addresses: ReadonlyArray<string>): Target => {
  const clients = addresses.map((a) => new AirDBClient(a, credentials.createInsecure()))
  let next = 0
  const pick = () => clients[next++ % clients.length]!
  const call = <Req, Res>(
    f: (c: InstanceType<typeof AirDBClient>) => (req: Req, cb: (e: ServiceError | null, r: Res) => void) => unknown,
    req: Req
  ) =>
    Effect.async<Res, ServiceError>((resume) => {
      const c = pick()
      f(c).call(c, req, (e, r) => resume(e ? Effect.fail(e) : Effect.succeed(r)))
    })
  const b = (s: string) => Buffer.from(s)
  return {
    op: (kind, key, value) => {
      const v = Buffer.from(value.buffer, value.byteOffset, value.byteLength)
      if (kind === "read") return Effect.asVoid(call((c) => c.get, { key: b(key) }))
      if (kind === "update" || kind === "insert") return Effect.asVoid(call((c) => c.put, { key: b(key), value: v }))
      // Read, then write conditional on what was read (a compare in the transaction), until it commits.
      const attempt = Effect.flatMap(
        call((c) => c.get, { key: b(key) }) as Effect.Effect<{ found: boolean; value: Buffer }, ServiceError>,
        (old) =>
          call((c) => c.transact, {
            ops: [
              { op: { $case: "compare", value: { key: b(key), exists: old.found, value: old.value } } },
              { op: { $case: "put", value: { key: b(key), value: v } } }
            ],
            maxAttempts: 0
          }) as Effect.Effect<{ committed: boolean }, ServiceError>
      )
      return Effect.asVoid(Effect.repeat(attempt, { until: (r) => r.committed }))
    },
    put: (entries) =>
      Effect.asVoid(
        call((c) => c.transact, {
          ops: entries.map(([k, v]) => ({
            op: { $case: "put" as const, value: { key: b(k), value: Buffer.from(v) } }
          })),
          maxAttempts: 0
        })
      ),
    stats: () => undefined
  }
}

const load = (spec: LoadSpec, target: Target): Effect.Effect<LoadOutput> =>
  Effect.gen(function* () {
    const mix = MIXES[spec.workload ?? "read-only"]
    const keySpace = spec.keySpace ?? 10_000
    const concurrency = spec.concurrency ?? 16
    const value = randomBytes(VALUE_BYTES)
    const slaMs = spec.slaMs ?? 100
    const giveUpMs = spec.giveUpMs ?? 5_000
    let insertNext = spec.insertBase ?? keySpace
    const latencies = newHistogram()
    const timeline: Array<number> = []
    let errors = 0
    let withinSla = 0
    let late = 0
    let unreachable = 0
    let aborts = 0
    const warmupEnd = performance.now() + (spec.warmupMs ?? 0)
    const end = warmupEnd + (spec.durationMs ?? 5_000)
    let measuring = false
    const interval = spec.rate !== undefined && spec.rate > 0 ? (concurrency / spec.rate) * 1000 : 0
    const worker = Effect.gen(function* () {
      let nextAt = performance.now()
      while (performance.now() < end) {
        if (interval > 0) {
          nextAt += interval
          const wait = nextAt - performance.now()
          if (wait > 0) yield* Effect.sleep(wait)
        }
        const kind = opFor(mix, Math.random())
        const key = kind === "insert" ? keyName(insertNext++) : keyName(Math.floor(Math.random() * keySpace))
        const t0 = performance.now()
        const counted = t0 >= warmupEnd
        // An operation that fails is retried until it succeeds or gives up: what a user of the system sees.
        let ok = false
        for (;;) {
          const r = yield* Effect.either(target.op(kind, key, value))
          if (r._tag === "Right") {
            ok = true
            break
          }
          if (tagOf(r.left) === "TransactionAborted") aborts++
          if (counted) errors++
          if (performance.now() - t0 > giveUpMs || performance.now() > end + giveUpMs) break
          yield* Effect.sleep(10)
        }
        const t1 = performance.now()
        if (!counted || t1 > end) continue
        measuring = true
        if (!ok) {
          unreachable++
          continue
        }
        const ms = t1 - t0
        recordMs(latencies, ms)
        if (ms <= slaMs) withinSla++
        else late++
        const bucket = Math.floor((t1 - warmupEnd) / 100)
        while (timeline.length <= bucket) timeline.push(0)
        timeline[bucket]!++
      }
    })
    yield* Effect.all(
      Array.from({ length: concurrency }, () => worker),
      { concurrency: "unbounded", discard: true }
    )
    const seconds = (spec.durationMs ?? 5_000) / 1000
    const stats = target.stats()
    const summary = summarize(latencies)
    return {
      ops: summary.count,
      errors,
      seconds,
      throughput: measuring ? summary.count / seconds : 0,
      p50Ms: summary.p50Ms,
      p99Ms: summary.p99Ms,
      maxMs: summary.maxMs,
      histogram: encodeHistogram(latencies),
      timeline100ms: timeline,
      withinSla,
      late,
      unreachable,
      aborts,
      ...(stats === undefined ? {} : { clientStats: stats })
    }
  })

const fill = (spec: LoadSpec, target: Target): Effect.Effect<unknown, unknown> =>
  Effect.gen(function* () {
    const f = spec.fill!
    const value = randomBytes(VALUE_BYTES)
    let next = f.from
    const worker = Effect.gen(function* () {
      while (next < f.to) {
        const from = next
        next = Math.min(f.to, next + f.batch)
        const entries = Array.from({ length: next - from }, (_, i) => [keyName(from + i), value] as const)
        yield* Effect.retry(target.put(entries), {
          while: (e) => tagOf(e) === "TransactionAborted" || tagOf(e) === "StorageUnavailable"
        })
      }
    })
    yield* Effect.all(
      Array.from({ length: spec.concurrency ?? 4 }, () => worker),
      {
        concurrency: "unbounded",
        discard: true
      }
    )
    return { filled: f.to - f.from, clientStats: target.stats() }
  })

const main = async () => {
  const spec = JSON.parse(process.argv[2] ?? "{}") as LoadSpec
  const out = (x: unknown) => process.stdout.write(`${JSON.stringify(x)}\n`)
  const drive = (target: Target) => (spec.mode === "fill" ? fill(spec, target) : load(spec, target))
  if (spec.target.kind === "grpc") {
    out(await Effect.runPromise(drive(grpcTarget(spec.target.addresses))))
    return
  }
  const t = spec.target
  const started = performance.now()
  await Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const raw = yield* openSegmentStore(t.storage)
        const store = withFailures(raw, t.failureRate ?? 0, Math.random)
        const client = yield* openClient(store, {
          store: t.store,
          ...(t.cacheBytes === undefined ? {} : { cacheBytes: t.cacheBytes })
        })
        if (spec.mode === "coldstart") {
          const opened = performance.now()
          yield* client.put(`coldstart-${randomBytes(4).toString("hex")}`, randomBytes(16))
          const committed = performance.now()
          out({
            coldStartMs: spec.spawnedAt === undefined ? committed - started : Date.now() - spec.spawnedAt,
            openMs: opened - started,
            firstCommitMs: committed - opened,
            clientStats: client.stats()
          })
          return
        }
        out(yield* drive(airdbTarget(t, client)))
      })
    )
  )
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e instanceof Error ? e.stack : e)
    process.exit(1)
  }
)
