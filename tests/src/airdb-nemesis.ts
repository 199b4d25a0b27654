/**
 * A nemesis for AirDB over real processes, as issue 23's tester ran it: three `reef run airdb` clients share
 * one store on JetStream (a spawned nats-server), concurrent list-append workers talk to them over gRPC with
 * this file's own encoding (a list is "e1,e2,..." in UTF-8), and faults are injected one at a time:
 *
 *   client-kill    kill -9 an airdb client, start it again (a new incarnation)
 *   client-pause   SIGSTOP an airdb client (also in the middle of its tail syncs), SIGCONT it
 *   storage-kill   kill -9 the nats-server (the storage), start it again on the same port and store
 *   storage-pause  SIGSTOP the nats-server, SIGCONT it
 *
 * A worker's append reads the key (Transact [read k]) and then commits Transact [compare(k, what it read),
 * put(k, old + "," + e)]: committed, the transaction read `old` and appended e. Reads are `Get` (the
 * linearizable point read) or a Transact of two reads. After the faults every client must serve again; each
 * key is read through every client; the history (with real-time order) goes through the Elle-style checker
 * for strict serializability, and every acknowledged append must be in the final lists, once, with all
 * clients agreeing. A `site` (hosts/airdb-hosts.test.ts) runs each client on its own host of a NATS cluster
 * with clustered JetStream instead: the storage faults then hit one server of the cluster, and one more kind
 * cuts a client's host off at the link proxy and heals it:
 *
 *   client-partition  an airdb client's host (its own nats-server with it), 2-8 s
 *
 * The CI test (airdb-nemesis.test.ts) runs one fault of each kind;
 * `pnpm test:airdb-nemesis --minutes N` (airdb-nemesis-main.ts) runs random ones for N minutes.
 */
import { credentials, Metadata, type ServiceError } from "@grpc/grpc-js"
import { type CheckResult, checkListAppend, type MicroOp, type Txn } from "@reef/airdb/testing"
import { GrpcCode } from "@reef/grpc"
import { AirDBClient, type AirDbTransactRequest, type AirDbTransactResponse } from "@reef/proto"
import * as Effect from "effect/Effect"
import { type ActorProcess, type Harness, makeHarness, startActorProcess, startNats } from "./harness.js"
import { prng } from "./popuc-harness.js"

export type AirDbFault = "client-kill" | "client-pause" | "storage-kill" | "storage-pause" | "client-partition"
export const AIRDB_FAULTS: ReadonlyArray<AirDbFault> = ["client-kill", "client-pause", "storage-kill", "storage-pause"]

/** Where the clients and their storage run: one nats-server on loopback (the default), or hosts of a NATS cluster. */
export interface AirDbSite {
  /** Client `a1`..`a3`: its host's NATS URL, the address its gRPC port listens on, the prefix to run it there. */
  readonly placement: (client: string) => {
    readonly natsUrl: string
    readonly address: string
    readonly prefix?: ReadonlyArray<string>
  }
  /** More `reef run airdb` arguments (`--js-replicas 3` on a cluster). */
  readonly clientArgs?: ReadonlyArray<string>
  /** The storage: the servers a storage fault hits (one at random). */
  readonly servers: ReadonlyArray<{
    readonly name: string
    readonly kill: Effect.Effect<void, unknown>
    readonly restart: Effect.Effect<void, unknown>
    readonly pid: Effect.Effect<number | undefined>
  }>
  /** Cuts the host of `client` off (`true`) or heals it; client-partition needs it. */
  readonly partition?: (client: string, cut: boolean) => Effect.Effect<void, unknown>
  /** Resolves once the site is whole again after a heal (a NATS cluster's routes). */
  readonly healed?: Effect.Effect<void, unknown>
  /** A line about the storage said at the end (how the store's streams are replicated). */
  readonly report?: Effect.Effect<string, unknown>
}

export interface AirDbNemesisOptions {
  readonly seed: number
  /** Time of random faults after the first four (one of each kind), in ms. */
  readonly faultsMs: number
  readonly workers?: number
  readonly keys?: number
  /** Longest client SIGSTOP and storage SIGSTOP (the issue: up to 15 s and 20 s). */
  readonly maxClientPauseMs?: number
  readonly maxStoragePauseMs?: number
  /** The first faults are one of each of these kinds; then random ones of them (default: the four above). */
  readonly faultKinds?: ReadonlyArray<AirDbFault>
  readonly site?: (harness: Harness) => Promise<AirDbSite>
  readonly say?: (line: string) => void
}

export interface AirDbNemesisReport {
  readonly seed: number
  readonly elapsedMs: number
  readonly txns: { readonly ok: number; readonly fail: number; readonly info: number }
  readonly appends: { readonly acknowledged: number; readonly lost: ReadonlyArray<string> }
  readonly faults: Readonly<Partial<Record<AirDbFault, number>>>
  /** Per restarted client: ms from spawn to serving. */
  readonly restartsMs: ReadonlyArray<number>
  /** Per restarted client: its cold start's ms as its ready line says (the rest of a restart is the process). */
  readonly coldStartsMs: ReadonlyArray<number>
  /** Restarts that printed no ready line within their bound (each was tried again). */
  readonly startFailures: ReadonlyArray<string>
  readonly elle: CheckResult
  /** Keys whose final lists differ between clients. */
  readonly disagreements: ReadonlyArray<string>
  readonly events: ReadonlyArray<string>
}

const CLIENTS = ["a1", "a2", "a3"] as const
const CALL_TIMEOUT_MS = 4_000
const SERVE_BOUND_MS = 120_000

const parseList = (bytes: Buffer | undefined, found: boolean): Array<number> =>
  !found || bytes === undefined || bytes.byteLength === 0 ? [] : bytes.toString("utf8").split(",").map(Number)
const formatList = (list: ReadonlyArray<number>) => Buffer.from(list.join(","), "utf8")

/** A call's failure: certainly without effect, or unknown (Jepsen's fail / info). */
const certainlyFailed = (e: ServiceError) =>
  e.code === GrpcCode.ABORTED || e.code === GrpcCode.INVALID_ARGUMENT || e.code === GrpcCode.FAILED_PRECONDITION

interface Client {
  process: ActorProcess
  address: string
  grpc: AirDBClient
  incarnation: number
}

const addressOf = (process: ActorProcess): string => {
  const line = process.lines.find((l) => / on \S+:\d+ store /.test(l))
  const m = line === undefined ? null : / on (\S+:\d+) store /.exec(line)
  if (m === null) throw new Error(`no gRPC address in the airdb output:\n${process.lines.slice(-10).join("\n")}`)
  return m[1]!
}

export const runAirDbNemesis = async (options: AirDbNemesisOptions): Promise<AirDbNemesisReport> => {
  const harness = makeHarness()
  try {
    const site = await (options.site ?? localSite)(harness)
    return await nemesis(harness, site, options)
  } finally {
    await harness.close()
  }
}

/** One nats-server on loopback, every process in the test's own namespace. */
const localSite = async (harness: Harness): Promise<AirDbSite> => {
  const nats = await startNats(harness)
  return {
    placement: () => ({ natsUrl: nats.url, address: "127.0.0.1" }),
    servers: [{ name: "nats-server", kill: nats.kill, restart: nats.restart, pid: nats.pid }]
  }
}

const nemesis = async (harness: Harness, site: AirDbSite, options: AirDbNemesisOptions) => {
  const began = performance.now()
  const random = prng(options.seed)
  const between = (lo: number, hi: number) => Math.round(lo + random() * (hi - lo))
  const events: Array<string> = []
  const say = (line: string) => {
    const stamped = `${((performance.now() - began) / 1000).toFixed(1)}s ${line}`
    events.push(stamped)
    options.say?.(stamped)
  }
  const cluster = `airdbnemesis${options.seed}`
  const store = `nem${options.seed % 100_000}`

  const clients = new Map<string, Client>()
  const start = async (id: string, incarnation: number) => {
    const place = site.placement(id)
    const process = await startActorProcess(harness, {
      role: "airdb",
      id,
      natsUrl: place.natsUrl,
      cluster,
      ...(place.prefix === undefined ? {} : { prefix: place.prefix }),
      extraArgs: ["--store", store, "--grpc-port", "0", "--host", place.address, ...(site.clientArgs ?? [])]
    })
    const address = addressOf(process)
    const client: Client = {
      process,
      address,
      grpc: new AirDBClient(address, credentials.createInsecure()),
      incarnation
    }
    clients.get(id)?.grpc.close()
    clients.set(id, client)
    return client
  }
  for (const id of CLIENTS) await start(id, 0)
  say(`3 airdb clients on store ${store} (JetStream at ${CLIENTS.map((id) => site.placement(id).natsUrl).join(", ")})`)

  // ---- the workload --------------------------------------------------------------------------------------------
  const deadline = () => ({ deadline: Date.now() + CALL_TIMEOUT_MS })
  const transact = (c: Client, request: AirDbTransactRequest) =>
    new Promise<AirDbTransactResponse>((resolve, reject) =>
      c.grpc.transact(request, new Metadata(), deadline(), (e, r) => (e === null ? resolve(r) : reject(e)))
    )
  const get = (c: Client, key: string) =>
    new Promise<Array<number>>((resolve, reject) =>
      c.grpc.get({ key: Buffer.from(key) }, new Metadata(), deadline(), (e, r) =>
        e === null ? resolve(parseList(r.value, r.found)) : reject(e)
      )
    )
  const readTwo = async (c: Client, k1: string, k2: string) => {
    const r = await transact(c, {
      ops: [
        { op: { $case: "read", value: { key: Buffer.from(k1) } } },
        { op: { $case: "read", value: { key: Buffer.from(k2) } } }
      ],
      maxAttempts: 0
    })
    return r.reads.map((x) => parseList(x.value, x.found))
  }

  const history: Array<Txn> = []
  let nextId = 1
  let stopping = false
  const keys = options.keys ?? 6
  const workerCount = options.workers ?? 9
  const acknowledged = new Map<string, Set<number>>()
  const worker = async (w: number) => {
    const draw = prng(options.seed * 1000 + w)
    let generation = 0
    let counter = 0
    const target = CLIENTS[w % CLIENTS.length]!
    while (!stopping) {
      const c = clients.get(target)!
      const key = `k${Math.floor(draw() * keys)}`
      const roll = draw()
      const id = nextId++
      const process = `w${w}.${generation}`
      const invokedAt = performance.now()
      const done = (type: Txn["type"], ops: ReadonlyArray<MicroOp>) =>
        history.push({
          id,
          process,
          type,
          ops,
          invokedAt,
          completedAt: type === "info" ? Number.POSITIVE_INFINITY : performance.now()
        })
      try {
        if (roll < 0.25) {
          done("ok", [{ f: "read", key, value: await get(c, key) }])
        } else if (roll < 0.4) {
          const other = `k${Math.floor(draw() * keys)}`
          if (other === key) continue
          const [a, b] = await readTwo(c, key, other)
          done("ok", [
            { f: "read", key, value: a! },
            { f: "read", key: other, value: b! }
          ])
        } else {
          const [old] = await readTwo(c, key, key === "k0" ? "k1" : "k0")
          const element = w * 10_000_000 + ++counter
          const appendedAt = performance.now()
          const ops: Array<MicroOp> = [
            { f: "read", key, value: old! },
            { f: "append", key, value: element }
          ]
          try {
            const r = await transact(c, {
              ops: [
                {
                  op: {
                    $case: "compare",
                    value: { key: Buffer.from(key), exists: old!.length > 0, value: formatList(old!) }
                  }
                },
                { op: { $case: "put", value: { key: Buffer.from(key), value: formatList([...old!, element]) } } }
              ],
              maxAttempts: 1
            })
            history.push({
              id,
              process,
              type: r.committed ? "ok" : "fail",
              ops,
              invokedAt: appendedAt,
              completedAt: performance.now()
            })
            if (r.committed) {
              const set = acknowledged.get(key) ?? new Set<number>()
              set.add(element)
              acknowledged.set(key, set)
            }
          } catch (e) {
            const error = e as ServiceError
            const type = certainlyFailed(error) ? "fail" : "info"
            history.push({
              id,
              process,
              type,
              ops,
              invokedAt: appendedAt,
              completedAt: type === "info" ? Number.POSITIVE_INFINITY : performance.now()
            })
            if (type === "info") generation++
            await new Promise((r) => setTimeout(r, 50))
          }
        }
      } catch {
        // A read that failed changed nothing: it is not in the history. Back off while the client is away.
        await new Promise((r) => setTimeout(r, 100))
      }
    }
  }
  const workers = Array.from({ length: workerCount }, (_, w) => worker(w))

  // ---- faults --------------------------------------------------------------------------------------------------
  const kinds = options.faultKinds ?? AIRDB_FAULTS
  const faults: Partial<Record<AirDbFault, number>> = Object.fromEntries(kinds.map((k) => [k, 0]))
  const restartsMs: Array<number> = []
  const coldStartsMs: Array<number> = []
  const startFailures: Array<string> = []
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
  /** Waits until `id` answers a Get (a liveness bound, not a performance claim). */
  const serving = async (id: string) => {
    const from = performance.now()
    for (;;) {
      try {
        await get(clients.get(id)!, "k0")
        return performance.now() - from
      } catch {
        if (performance.now() - from > SERVE_BOUND_MS) {
          throw new Error(
            `${id} did not serve within ${SERVE_BOUND_MS} ms:\n${clients.get(id)!.process.lines.slice(-20).join("\n")}`
          )
        }
        await sleep(100)
      }
    }
  }
  const inject = async (kind: AirDbFault) => {
    faults[kind] = (faults[kind] ?? 0) + 1
    const id = CLIENTS[between(0, CLIENTS.length - 1)]!
    // One server: no draw, so a seed's faults stay what they were before sites.
    const server = site.servers.length === 1 ? site.servers[0]! : site.servers[between(0, site.servers.length - 1)]!
    switch (kind) {
      case "client-kill": {
        const c = clients.get(id)!
        say(`${id}: kill -9, restart`)
        c.process.child.kill("SIGKILL")
        await c.process.exited
        const spawned = performance.now()
        // A start that prints no ready line within its bound is a finding (reported), then tried again.
        for (let attempt = 1; ; attempt++) {
          try {
            await start(id, c.incarnation + attempt)
            break
          } catch (e) {
            startFailures.push(`${id}: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}`)
            say(`  ${id} did not start (attempt ${attempt}): ${startFailures.at(-1)}`)
            if (attempt >= 3) throw e
          }
        }
        await serving(id)
        restartsMs.push(performance.now() - spawned)
        const ready = clients.get(id)!.process.lines.find((l) => l.includes("cold start"))
        const cold = ready === undefined ? undefined : /cold start (\d+) ms/.exec(ready)?.[1]
        if (cold !== undefined) coldStartsMs.push(Number(cold))
        say(`  ${id} serves again ${(performance.now() - spawned).toFixed(0)} ms after the restart`)
        return
      }
      case "client-pause": {
        const ms = between(1_000, options.maxClientPauseMs ?? 3_000)
        const c = clients.get(id)!
        say(`${id}: SIGSTOP for ${ms} ms`)
        c.process.child.kill("SIGSTOP")
        await sleep(ms)
        c.process.child.kill("SIGCONT")
        say(`  ${id} serves again ${(await serving(id)).toFixed(0)} ms after SIGCONT`)
        return
      }
      case "storage-kill": {
        const down = between(200, 2_000)
        say(`${server.name}: kill -9, restart after ${down} ms`)
        await Effect.runPromise(server.kill)
        await sleep(down)
        await Effect.runPromise(server.restart)
        for (const c of CLIENTS) await serving(c)
        say("  every client serves again")
        return
      }
      case "storage-pause": {
        const ms = between(2_000, options.maxStoragePauseMs ?? 4_000)
        const pid = await Effect.runPromise(server.pid)
        if (pid === undefined) throw new Error(`${server.name} has no pid`)
        say(`${server.name}: SIGSTOP for ${ms} ms`)
        process.kill(pid, "SIGSTOP")
        await sleep(ms)
        process.kill(pid, "SIGCONT")
        for (const c of CLIENTS) await serving(c)
        say("  every client serves again")
        return
      }
      case "client-partition": {
        const partition = site.partition
        if (partition === undefined) throw new Error("this site cannot cut a client's host off")
        const ms = between(2_000, 8_000)
        say(`${id}'s host: cut off for ${ms} ms`)
        await Effect.runPromise(partition(id, true))
        try {
          await sleep(ms)
        } finally {
          await Effect.runPromise(partition(id, false))
        }
        await Effect.runPromise(site.healed ?? Effect.void)
        say(`  ${id} serves again ${(await serving(id)).toFixed(0)} ms after the heal`)
        return
      }
    }
  }

  await sleep(3_000)
  const order = [...kinds].sort(() => random() - 0.5)
  for (const kind of order) {
    await inject(kind)
    await sleep(between(1_000, 3_000))
  }
  const faultsUntil = performance.now() + options.faultsMs
  while (performance.now() < faultsUntil) {
    await inject(kinds[between(0, kinds.length - 1)]!)
    await sleep(between(500, 4_000))
  }
  await sleep(2_000)
  stopping = true
  await Promise.all(workers)

  // ---- final reads: every key through every client ---------------------------------------------------------------
  for (const id of CLIENTS) await serving(id)
  const finals = new Map<string, Map<string, Array<number>>>()
  for (let k = 0; k < keys; k++) {
    const key = `k${k}`
    const perClient = new Map<string, Array<number>>()
    for (const id of CLIENTS) {
      const invokedAt = performance.now()
      const value = await get(clients.get(id)!, key)
      history.push({
        id: nextId++,
        process: `final.${id}`,
        type: "ok",
        ops: [{ f: "read", key, value }],
        invokedAt,
        completedAt: performance.now()
      })
      perClient.set(id, value)
    }
    finals.set(key, perClient)
  }
  for (const c of clients.values()) c.grpc.close()
  if (site.report !== undefined) say(await Effect.runPromise(site.report))

  const disagreements: Array<string> = []
  const lost: Array<string> = []
  let acked = 0
  for (const [key, perClient] of finals) {
    const lists = [...perClient.values()].map((l) => l.join(","))
    if (new Set(lists).size > 1)
      disagreements.push(`${key}: ${[...perClient].map(([id, l]) => `${id} has ${l.length}`).join(", ")}`)
    const final = perClient.get("a1")!
    const seen = new Map<number, number>()
    for (const e of final) seen.set(e, (seen.get(e) ?? 0) + 1)
    for (const e of acknowledged.get(key) ?? []) {
      acked++
      const n = seen.get(e) ?? 0
      if (n !== 1) lost.push(`${key}: acknowledged append ${e} is there ${n} times`)
    }
  }
  const elle = checkListAppend(history, "strict-serializable")
  const count = (type: Txn["type"]) => history.filter((t) => t.type === type).length
  return {
    seed: options.seed,
    elapsedMs: performance.now() - began,
    txns: { ok: count("ok"), fail: count("fail"), info: count("info") },
    appends: { acknowledged: acked, lost },
    faults,
    restartsMs,
    coldStartsMs,
    startFailures,
    elle,
    disagreements,
    events
  } satisfies AirDbNemesisReport
}

/** What must be empty after any run: the first anomalies, lost appends, disagreeing keys, failed restarts. */
export const airDbSafety = (r: AirDbNemesisReport) => ({
  anomalies: r.elle.anomalies.slice(0, 3).map((a) => `${a.type}: ${a.explanation}`),
  lost: r.appends.lost,
  disagreements: r.disagreements,
  startFailures: r.startFailures
})

export const summarizeAirDb = (r: AirDbNemesisReport): string =>
  [
    `seed ${r.seed}, ${(r.elapsedMs / 1000).toFixed(0)} s`,
    `transactions: ${r.txns.ok} ok, ${r.txns.fail} failed, ${r.txns.info} unknown`,
    `faults: ${Object.entries(r.faults)
      .map(([k, n]) => `${k} ${n}`)
      .join(", ")}`,
    `restarted clients served again after ${r.restartsMs.map((ms) => (ms / 1000).toFixed(1)).join(", ") || "-"} s`,
    `their cold starts (from the ready lines) took ${r.coldStartsMs.map((ms) => (ms / 1000).toFixed(1)).join(", ") || "-"} s`,
    `restarts that did not come up in time: ${r.startFailures.length}`,
    `acknowledged appends ${r.appends.acknowledged}, lost or duplicated ${r.appends.lost.length}`,
    `Elle (strict serializable): ${r.elle.valid ? "valid" : r.elle.anomalies.map((a) => a.type).join(", ")} over ${r.elle.stats.txns} transactions`,
    `clients disagree on ${r.disagreements.length} keys`
  ].join("\n")
