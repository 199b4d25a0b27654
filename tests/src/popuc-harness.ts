/**
 * A POPUC group of real replica processes (`reef run replica`) over a spawned nats-server, and a recorded
 * concurrent KV workload for the linearizability checker.
 */

import { GrpcCode } from "@reef/grpc"
import type { NatsServer } from "@reef/kernel"
import { freePort } from "@reef/kernel"
import {
  checkLinearizable,
  HistoryRecorder,
  type KvCallError,
  type KvClient,
  type LinearizabilityResult,
  makeKvClient,
  type ProcessId
} from "@reef/replica"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { afterAll, beforeAll } from "vitest"
import { type ActorProcess, eventually, type Harness, makeHarness, startActorProcess, startNats } from "./harness.js"

export interface Group {
  readonly ids: ReadonlyArray<string>
  readonly ports: ReadonlyArray<number>
  readonly addresses: ReadonlyArray<string>
  readonly processes: Map<string, ActorProcess>
  readonly start: (id: string) => Promise<ActorProcess>
}

export interface GroupOptions {
  readonly n: number
  readonly natsUrl: string
  readonly cluster: string
  readonly group?: string
  /** Parallel NIC engines per replica (the pipelined mode). */
  readonly engines?: number
  /** Fixed ΔI in ms (30 by default). */
  readonly interactionMs?: number
  /** Calibrate ΔI at bootstrap like a production replica, instead of the fixed one. */
  readonly calibrate?: boolean
  /** Extra environment for every replica process (e.g. OTLP export). */
  readonly env?: Record<string, string>
  /** Extra `reef run replica` flags for every replica. */
  readonly extraArgs?: ReadonlyArray<string>
  /**
   * Where replica `index` runs, when not on this machine's loopback (hosts/hosts.ts): its host's nats-server,
   * the address its KV port listens on, and the command prefix that runs it there.
   */
  readonly placement?: (index: number) => ReplicaPlacement
}

export interface ReplicaPlacement {
  readonly natsUrl: string
  readonly address: string
  readonly prefix: ReadonlyArray<string>
}

export const startGroup = async (harness: Harness, options: GroupOptions): Promise<Group> => {
  const ids = Array.from({ length: options.n }, (_, i) => `r${i + 1}`)
  const ports = await Promise.all(ids.map(() => Effect.runPromise(freePort)))
  const processes = new Map<string, ActorProcess>()
  const placed = ids.map((_, i) => options.placement?.(i))
  const start = async (id: string) => {
    const place = placed[ids.indexOf(id)]
    const process = await startActorProcess(harness, {
      role: "replica",
      id,
      natsUrl: place?.natsUrl ?? options.natsUrl,
      cluster: options.cluster,
      ...(options.env === undefined ? {} : { env: options.env }),
      ...(place === undefined ? {} : { prefix: place.prefix }),
      extraArgs: [
        ...(place === undefined ? [] : ["--kv-host", place.address]),
        "--group",
        options.group ?? "kv",
        "--members",
        ids.join(","),
        "--kv-port",
        String(ports[ids.indexOf(id)]!),
        ...(options.engines === undefined ? [] : ["--engines", String(options.engines)]),
        // A fixed ΔI: calibrating while other test processes load the machine would make rounds arbitrarily long.
        ...(options.calibrate === true ? [] : ["--interaction-ms", String(options.interactionMs ?? 30)]),
        ...(options.extraArgs ?? [])
      ]
    })
    processes.set(id, process)
    return process
  }
  await Promise.all(ids.map(start))
  return { ids, ports, addresses: ports.map((p, i) => `${placed[i]?.address ?? "127.0.0.1"}:${p}`), processes, start }
}

/** A small seeded PRNG (mulberry32): workloads are reproducible from their seed. */
export const prng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString()
/** DEADLINE_EXCEEDED and UNAVAILABLE after sending may or may not have taken effect. */
export const isAmbiguous = (e: KvCallError) => e.code === GrpcCode.DEADLINE_EXCEEDED || e.code === GrpcCode.UNAVAILABLE

/** How a recorded operation ended: answered, or failed (`ambiguous`: its outcome is unknown). */
export type OperationOutcome =
  | { readonly _tag: "Answered" }
  | { readonly _tag: "Failed"; readonly ambiguous: boolean; readonly error: KvCallError }

/**
 * Random operations (set, get, cas, delete) over `keys` keys named `prefix0..`, recorded in `recorder`. Every
 * written value is distinct (`c<writer>-<n>`); a CAS expects an earlier-looking value or the key's absence.
 */
export const makeRandomOperations = (
  recorder: HistoryRecorder,
  options: { readonly keys: number; readonly prefix: string; readonly writers: number }
) => {
  let counter = 0
  return (
    client: KvClient,
    process: ProcessId,
    writer: number,
    random: () => number
  ): Effect.Effect<OperationOutcome> => {
    const key = `${options.prefix}${Math.floor(random() * options.keys)}`
    const roll = random()
    const value = `c${writer}-${counter++}`
    const failed = (error: KvCallError): OperationOutcome => ({ _tag: "Failed", ambiguous: isAmbiguous(error), error })
    const answered: OperationOutcome = { _tag: "Answered" }
    if (roll < 0.35) {
      const id = recorder.invoke(process, { _tag: "Set", key, value }, performance.now())
      return Effect.match(client.set(key, Buffer.from(value)), {
        onSuccess: () => {
          recorder.complete(id, { ok: true }, performance.now())
          return answered
        },
        onFailure: (e) => {
          recorder.fail(id, isAmbiguous(e))
          return failed(e)
        }
      })
    }
    if (roll < 0.75) {
      const id = recorder.invoke(process, { _tag: "Get", key }, performance.now())
      return Effect.match(client.get(key), {
        onSuccess: (r) => {
          recorder.complete(id, r.found ? { found: true, value: text(r.value) } : { found: false }, performance.now())
          return answered
        },
        onFailure: (e) => {
          recorder.fail(id, isAmbiguous(e))
          return failed(e)
        }
      })
    }
    if (roll < 0.9) {
      const expected =
        random() < 0.3 ? null : `c${Math.floor(random() * options.writers)}-${Math.floor(random() * counter)}`
      const id = recorder.invoke(process, { _tag: "Cas", key, expected, value }, performance.now())
      return Effect.match(
        client.compareAndSet(key, expected === null ? null : Buffer.from(expected), Buffer.from(value)),
        {
          onSuccess: (r) => {
            recorder.complete(
              id,
              r.swapped ? { swapped: true } : { swapped: false, current: r.currentFound ? text(r.current) : null },
              performance.now()
            )
            return answered
          },
          onFailure: (e) => {
            recorder.fail(id, isAmbiguous(e))
            return failed(e)
          }
        }
      )
    }
    const id = recorder.invoke(process, { _tag: "Delete", key }, performance.now())
    return Effect.match(client.delete(key), {
      onSuccess: (r) => {
        recorder.complete(id, { existed: r.existed }, performance.now())
        return answered
      },
      onFailure: (e) => {
        recorder.fail(id, isAmbiguous(e))
        return failed(e)
      }
    })
  }
}

/**
 * `clients` concurrent clients, each running `opsPerClient` random operations (set, get, cas, delete) over
 * `keys` keys, recorded with invocation and completion times. Returns the recorder's entries.
 */
export const recordWorkload = (
  clients: ReadonlyArray<KvClient>,
  options: { readonly opsPerClient: number; readonly keys: number; readonly seed: number; readonly prefix: string }
) =>
  Effect.gen(function* () {
    const recorder = new HistoryRecorder()
    const operation = makeRandomOperations(recorder, { ...options, writers: clients.length })
    yield* Effect.forEach(
      clients,
      (client, c) =>
        Effect.gen(function* () {
          const random = prng(options.seed * 1000 + c)
          for (let i = 0; i < options.opsPerClient; i++) yield* operation(client, c, c, random)
        }),
      { concurrency: "unbounded", discard: true }
    )
    return recorder.entries()
  })

export const check = (entries: Parameters<typeof checkLinearizable>[0]): LinearizabilityResult =>
  checkLinearizable(entries)

/** `count` KV clients of `group` in `mode`, for the duration of `use`. */
export const withGroupClients = <A, E>(
  group: Group,
  count: number,
  mode: "leader" | "balanced" | "colocated",
  use: (clients: ReadonlyArray<KvClient>) => Effect.Effect<A, E>
) =>
  Effect.gen(function* () {
    const clients = yield* Effect.forEach(
      Array.from({ length: count }, (_, i) => i),
      (i) => makeKvClient({ replicas: group.addresses, mode, clientIndex: i, timeoutMs: 15_000 })
    )
    return yield* use(clients)
  }).pipe(Effect.scoped)

/** Waits until the replicas `ids` of `group` applied the same commands, then returns their states. */
export const settledGroupHashes = (group: Group, ids: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const client = yield* makeKvClient({ replicas: group.addresses })
    return yield* eventually(
      Effect.forEach(ids, (id) => client.state(group.ids.indexOf(id))).pipe(
        Effect.filterOrFail((states) => new Set(states.map((s) => `${s.appliedCommands}/${s.stateHash}`)).size === 1)
      ),
      60
    )
  }).pipe(Effect.scoped as <A, E, R>(e: Effect.Effect<A, E, R>) => Effect.Effect<A, E, Exclude<R, Scope.Scope>>)

/**
 * `count` clients of `group` in `mode` run `recordWorkload`; returns the history and, once every replica
 * applied the same commands, the replicas' states.
 */
export const runWorkload = (
  group: Group,
  count: number,
  mode: "leader" | "balanced" | "colocated",
  workload: Parameters<typeof recordWorkload>[1]
) =>
  withGroupClients(group, count, mode, (clients) =>
    Effect.gen(function* () {
      const entries = yield* recordWorkload(clients, workload)
      const states = yield* settledGroupHashes(group, group.ids)
      return { entries, states }
    })
  )

export interface GroupFixture {
  readonly harness: Harness
  readonly nats: NatsServer
  readonly group: Group
}

/**
 * One test file's setup: a spawned nats-server and a replica group, started before the file's tests and
 * stopped after them. `options` may start more first (e.g. an OTLP receiver whose URL the replicas need).
 * The fields are read inside tests, once `beforeAll` has run.
 */
export const useGroup = (
  options: Omit<GroupOptions, "natsUrl"> | ((harness: Harness) => Promise<Omit<GroupOptions, "natsUrl">>)
): GroupFixture => {
  const harness = makeHarness()
  const fixture = { harness } as { harness: Harness; nats: NatsServer; group: Group }
  beforeAll(async () => {
    fixture.nats = await startNats(harness)
    const resolved = typeof options === "function" ? await options(harness) : options
    fixture.group = await startGroup(harness, { ...resolved, natsUrl: fixture.nats.url })
  }, 120_000)
  afterAll(() => harness.close())
  return fixture
}
