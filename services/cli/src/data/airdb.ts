/**
 * `reef airdb get|put|del|scan|txn`: AirDB's transactional KV store through any running `airdb` client (found
 * through presence by its `grpc` endpoint). Reads are linearizable; `txn` runs its operations in one
 * strictly serializable transaction:
 *
 *   reef airdb txn 'if a = 1; get b; put c 3; del d'
 */
import type { ServiceError } from "@grpc/grpc-js"
import type {
  AirDbDeleteResponse,
  AirDbGetResponse,
  AirDbOp,
  AirDbPutResponse,
  AirDbScanResponse,
  AirDbTransactResponse
} from "@reef/proto"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { ClusterStateError, NotFoundError, UsageError } from "../cli/errors.js"
import { Arg, group, Opt } from "../cli/spec.js"
import { type ClientContext, dataCommand } from "./command.js"

/** A reef.v1.AirDB call failed (its status detail, as the airdb client words it). */
export class AirDbCallError extends Data.TaggedError("AirDbCallError")<{ readonly message: string }> {}

const target = {
  client: Opt.token({ description: "the AirDB client to ask (its id)", defaultText: "the first joined airdb client" })
}

type Client = import("@reef/proto").AirDBClient

/** A unary reef.v1.AirDB client of one running `airdb` actor, closed with the scope. */
const airdbClient = (context: ClientContext, input: { readonly client?: string | undefined }) =>
  Effect.gen(function* () {
    const [{ members, endpointsOf }, { AirDBClient }, grpc, { grpcClientCredentials }] = yield* Effect.promise(() =>
      Promise.all([
        import("./gateway.js"),
        import("@reef/proto"),
        import("@grpc/grpc-js"),
        import("@reef/grpc/security")
      ])
    )
    const all = endpointsOf(yield* members(context, "airdb"), "airdb", "grpc")
    if (all.length === 0) {
      return yield* new ClusterStateError({
        message: "no joined airdb client in this cluster (start one with 'reef up --with airdb' or 'reef run airdb')"
      })
    }
    const chosen = input.client === undefined ? all[0] : all.find((a) => a.id === input.client)
    if (chosen === undefined) {
      return yield* new UsageError({
        message: `--client ${input.client}: no joined airdb client of that id (clients: ${all.map((a) => a.id).join(", ")})`
      })
    }
    const client = yield* Effect.acquireRelease(
      Effect.sync(() => new AirDBClient(chosen.address, grpcClientCredentials()) as Client),
      (c) => Effect.sync(() => c.close())
    )
    return { client, metadata: () => new grpc.Metadata() }
  })

type Connected = Effect.Effect.Success<ReturnType<typeof airdbClient>>

/** One unary call, with the command's deadline; a gRPC failure becomes one line. */
const call = <Res>(
  context: ClientContext,
  connected: Connected,
  method: (client: Client) => unknown,
  request: unknown
) =>
  Effect.async<Res, AirDbCallError>((resume) => {
    ;(method(connected.client) as (...args: Array<unknown>) => unknown).call(
      connected.client,
      request,
      connected.metadata() as never,
      { deadline: Date.now() + context.timeoutMs },
      (e: ServiceError | null, r: Res) =>
        resume(e ? Effect.fail(new AirDbCallError({ message: e.details || e.message })) : Effect.succeed(r))
    )
  })

const b = (s: string) => Buffer.from(s, "utf8")
const text = (bytes: Uint8Array) => Buffer.from(bytes).toString("utf8")

const get = dataCommand({
  name: "get",
  command: "airdb get",
  summary: "print the value of a key (a linearizable read)",
  options: target,
  args: { key: Arg.key({ description: "the key" }) },
  examples: ["reef airdb get a"],
  run: (input, context) =>
    Effect.gen(function* () {
      const c = yield* airdbClient(context, input)
      const r = yield* call<AirDbGetResponse>(context, c, (x) => x.get, { key: b(input.key) })
      if (!r.found && context.format === "text")
        return yield* new NotFoundError({ message: `key "${input.key}" not found` })
      return { key: input.key, found: r.found, value: text(r.value), snapshot: r.snapshotEntries }
    }),
  text: (r) => r.value
})

const put = dataCommand({
  name: "put",
  command: "airdb put",
  summary: "set a key to a value (answered once committed)",
  options: target,
  args: { key: Arg.key({ description: "the key" }), value: Arg.text({ description: "the value (UTF-8 text)" }) },
  examples: ["reef airdb put a 1"],
  run: (input, context) =>
    Effect.gen(function* () {
      const c = yield* airdbClient(context, input)
      const r = yield* call<AirDbPutResponse>(context, c, (x) => x.put, { key: b(input.key), value: b(input.value) })
      return { key: input.key, commitTs: r.commitTs }
    }),
  text: (r) => `OK (commit ${r.commitTs})`
})

const del = dataCommand({
  name: "del",
  command: "airdb del",
  summary: "delete a key",
  options: target,
  args: { key: Arg.key({ description: "the key" }) },
  run: (input, context) =>
    Effect.gen(function* () {
      const c = yield* airdbClient(context, input)
      const r = yield* call<AirDbDeleteResponse>(context, c, (x) => x.delete, { key: b(input.key) })
      return { key: input.key, commitTs: r.commitTs }
    }),
  text: (r) => `deleted (commit ${r.commitTs})`
})

const scan = dataCommand({
  name: "scan",
  command: "airdb scan",
  summary: "list keys in [start, end) with their values, from one snapshot",
  options: {
    ...target,
    limit: Opt.integer({ description: "at most this many keys", default: 100, min: 1, max: 100_000 })
  },
  args: {
    start: Arg.optionalText({ description: "first key (default: the first)" }),
    end: Arg.optionalText({ description: "end key, excluded (default: no end)" })
  },
  examples: ["reef airdb scan", "reef airdb scan user: user;"],
  run: (input, context) =>
    Effect.gen(function* () {
      const c = yield* airdbClient(context, input)
      const r = yield* call<AirDbScanResponse>(context, c, (x) => x.scan, {
        start: b(input.start ?? ""),
        end: b(input.end ?? ""),
        limit: input.limit
      })
      return { items: r.items.map((i) => ({ key: text(i.key), value: text(i.value) })), more: r.more }
    }),
  text: (r) => [...r.items.map((i) => `${i.key}\t${i.value}`), ...(r.more ? ["..."] : [])].join("\n")
})

/** Parses `if a = 1; if b absent; get c; put d 4; del e` into transaction operations. */
export const parseTxn = (script: string): ReadonlyArray<AirDbOp> | string => {
  const ops: Array<AirDbOp> = []
  for (const part of script
    .split(";")
    .map((p) => p.trim())
    .filter((p) => p !== "")) {
    const words = part.split(/\s+/)
    const [verb, key] = words
    if (key === undefined) return `"${part}": every operation names a key`
    if (verb === "get" && words.length === 2) ops.push({ op: { $case: "read", value: { key: b(key) } } })
    else if (verb === "put" && words.length >= 3) {
      ops.push({
        op: { $case: "put", value: { key: b(key), value: b(part.slice(part.indexOf(key) + key.length).trim()) } }
      })
    } else if (verb === "del" && words.length === 2) ops.push({ op: { $case: "delete", value: { key: b(key) } } })
    else if (verb === "if" && words[2] === "=" && words.length >= 4) {
      const value = part.slice(part.indexOf("=") + 1).trim()
      ops.push({ op: { $case: "compare", value: { key: b(key), exists: true, value: b(value) } } })
    } else if (verb === "if" && words[2] === "absent" && words.length === 3) {
      ops.push({ op: { $case: "compare", value: { key: b(key), exists: false, value: b("") } } })
    } else return `"${part}": expected get K, put K V, del K, if K = V or if K absent`
  }
  return ops.length === 0 ? "an empty transaction" : ops
}

const txn = dataCommand({
  name: "txn",
  command: "airdb txn",
  summary: "run operations in one strictly serializable transaction: 'if K = V; get K; put K V; del K'",
  description:
    "Operations run in order against one snapshot and commit together, or not at all. `if K = V` and " +
    "`if K absent` abort the transaction (nothing is written) when they do not hold. A conflict with a " +
    "concurrent transaction is retried by the client.",
  options: target,
  args: { script: Arg.text({ description: "operations separated by ';'" }) },
  examples: ["reef airdb txn 'if a = 1; get b; put a 2; put b x'", "reef airdb txn 'if lock absent; put lock me'"],
  run: (input, context) =>
    Effect.gen(function* () {
      const ops = parseTxn(input.script)
      if (typeof ops === "string") return yield* new UsageError({ message: ops })
      const c = yield* airdbClient(context, input)
      const r = yield* call<AirDbTransactResponse>(context, c, (x) => x.transact, { ops: [...ops], maxAttempts: 0 })
      return {
        committed: r.committed,
        commitTs: r.commitTs,
        failedCompare: r.failedCompare,
        reads: r.reads.map((x) => ({ key: text(x.key), found: x.found, value: x.found ? text(x.value) : null }))
      }
    }),
  text: (r) =>
    [
      ...r.reads.map((x) => `${x.key}\t${x.found ? x.value : "(absent)"}`),
      r.committed
        ? `committed (commit ${r.commitTs === 0 ? "read-only" : r.commitTs})`
        : `not committed: condition ${r.failedCompare + 1} did not hold`
    ].join("\n"),
  notDone: (r) => (r.committed ? undefined : `not committed: condition ${r.failedCompare + 1} did not hold`)
})

export const airdbCommands = group({
  name: "airdb",
  summary: "AirDB's transactional KV store (through an airdb client)",
  placeholder: "<command>",
  listHeading: "Commands",
  commands: [get, put, del, scan, txn]
})
