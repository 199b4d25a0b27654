/**
 * `reef kv get|put|del|cas|state`: the replicated KV store of a POPUC group, etcdctl-style. Replicas are found
 * through presence (each announces its `kv` endpoint), so no port is ever typed. Every call is linearizable:
 * writes and reads are ordered through consensus.
 */
import type { StateResponse } from "@reef/proto"
import type { KvClient } from "@reef/replica"
import * as Effect from "effect/Effect"
import { ClusterStateError, NotFoundError, UsageError } from "../cli/errors.js"
import { Arg, group, Opt } from "../cli/spec.js"
import { formatTable } from "../table.js"
import { type ClientContext, dataCommand } from "./command.js"

const target = {
  replica: Opt.token({
    description: "the replica to ask (its id)",
    defaultText: "the first joined replica of the group"
  }),
  group: Opt.token({ description: "the POPUC group (KV store)", default: "kv" })
}

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString("utf8")

/** A unary KV client of one replica of the group (or of every replica, for `state`). */
const kvClient = (
  context: ClientContext,
  input: { readonly replica?: string | undefined; readonly group: string },
  all = false
) =>
  Effect.gen(function* () {
    const [{ members, endpointsOf }, { makeKvClient }] = yield* Effect.promise(() =>
      Promise.all([import("./gateway.js"), import("@reef/replica")])
    )
    const list = yield* members(context, "replica")
    const inGroup = endpointsOf(list, "replica", "kv").filter(
      (r) => (r.member.lastHeartbeat?.roleStatus.group ?? input.group) === input.group
    )
    if (inGroup.length === 0) {
      return yield* new ClusterStateError({
        message: `no joined replica of group ${input.group} in this cluster (start some with 'reef up' or 'reef run replica')`
      })
    }
    const chosen = input.replica === undefined ? inGroup : inGroup.filter((r) => r.id === input.replica)
    if (chosen.length === 0) {
      return yield* new UsageError({
        message: `--replica ${input.replica}: no joined replica of that id in group ${input.group} (replicas: ${inGroup.map((r) => r.id).join(", ")})`
      })
    }
    const replicas = all ? chosen : [chosen[0]!]
    const client = yield* makeKvClient({
      replicas: replicas.map((r) => r.address),
      transport: "unary",
      timeoutMs: context.timeoutMs
    })
    return { client, replicas }
  })

/** One call on one replica of the group, its reply with the key it was about. */
const onKey = <A, E>(
  context: ClientContext,
  input: { readonly replica?: string | undefined; readonly group: string; readonly key: string },
  call: (client: KvClient) => Effect.Effect<A, E>
) =>
  Effect.gen(function* () {
    const { client } = yield* kvClient(context, input)
    return { key: input.key, ...(yield* call(client)) }
  })

const get = dataCommand({
  name: "get",
  command: "kv get",
  summary: "print the value of a key (a linearizable read)",
  options: target,
  args: { key: Arg.key({ description: "the key" }) },
  examples: ["reef kv get a", "reef kv get a -o json"],
  run: (input, context) =>
    onKey(context, input, (client) => client.get(input.key)).pipe(
      Effect.filterOrFail(
        (reply) => reply.found || context.format === "json",
        () => new NotFoundError({ message: `key "${input.key}" not found` })
      )
    ),
  text: (r) => text(r.value),
  json: (r) => ({
    key: r.key,
    found: r.found,
    value: r.found ? r.value : null,
    version: r.version,
    instance: r.instance
  })
})

const put = dataCommand({
  name: "put",
  command: "kv put",
  summary: "set a key to a value (answered once the write is applied)",
  options: target,
  args: { key: Arg.key({ description: "the key" }), value: Arg.text({ description: "the value (UTF-8 text)" }) },
  examples: ["reef kv put a 1"],
  run: (input, context) => onKey(context, input, (client) => client.set(input.key, Buffer.from(input.value, "utf8"))),
  text: (r) => `OK (version ${r.version}, instance ${r.instance})`
})

const del = dataCommand({
  name: "del",
  command: "kv del",
  summary: "delete a key",
  options: target,
  args: { key: Arg.key({ description: "the key" }) },
  run: (input, context) => onKey(context, input, (client) => client.delete(input.key)),
  text: (r) => (r.existed ? `deleted (instance ${r.instance})` : `"${r.key}" did not exist (instance ${r.instance})`)
})

const cas = dataCommand({
  name: "cas",
  command: "kv cas",
  summary: "set a key only if its current value is --expect (or it is --absent)",
  options: {
    ...target,
    expect: Opt.text({ description: "the value the key must have now", defaultText: "none; give it or --absent" }),
    absent: Opt.flag({ description: "the key must not exist now" })
  },
  args: { key: Arg.key({ description: "the key" }), value: Arg.text({ description: "the new value (UTF-8 text)" }) },
  examples: ["reef kv cas a 2 --expect 1", "reef kv cas lock me --absent"],
  validate: (input) =>
    (input.expect === undefined) === !input.absent ? "give exactly one of --expect VALUE and --absent" : undefined,
  run: (input, context) =>
    onKey(context, input, (client) =>
      client.compareAndSet(
        input.key,
        input.absent ? null : Buffer.from(input.expect!, "utf8"),
        Buffer.from(input.value, "utf8")
      )
    ),
  text: (r) => `swapped (instance ${r.instance})`,
  notDone: (r) =>
    r.swapped
      ? undefined
      : `kv cas ${r.key}: not swapped: ${r.currentFound ? `its value is "${text(r.current)}"` : "the key does not exist"} (instance ${r.instance})`,
  json: (r) => ({
    key: r.key,
    swapped: r.swapped,
    current: r.swapped ? null : r.currentFound ? r.current : null,
    instance: r.instance
  })
})

const state = dataCommand({
  name: "state",
  command: "kv state",
  summary: "every replica's applied position and state hash (equal hashes at equal positions: equal states)",
  options: target,
  run: (input, context) =>
    Effect.gen(function* () {
      const { client, replicas } = yield* kvClient(context, input, true)
      return yield* Effect.forEach(replicas, (_, i) => client.state(i), {
        concurrency: "unbounded"
      })
    }),
  text: (states: ReadonlyArray<StateResponse>, style) => {
    const rows = states.map((s) => [
      s.replica,
      String(s.appliedInstance),
      String(s.appliedCommands),
      String(s.keys),
      s.stateHash.slice(0, 16),
      s.members.join(","),
      String(s.engine?.selfQuits ?? 0),
      (s.engine?.roundTimeP50Ms ?? 0).toFixed(2)
    ])
    const [head, ...rest] = formatTable(
      ["replica", "applied", "commands", "keys", "state hash", "members", "self-quits", "round p50 ms"],
      rows
    ).split("\n")
    return [style.heading(head!), ...rest].join("\n")
  }
})

export const kvCommands = group({
  name: "kv",
  summary: "read and write the replicated KV store (get, put, del, cas, state)",
  description:
    "Talks to the replicas of a POPUC group, found through the cluster's presence (each replica announces its KV " +
    "endpoint). Every operation is linearizable: writes are answered once applied, reads are ordered through consensus.",
  placeholder: "<command>",
  listHeading: "Commands",
  commands: [get, put, del, cas, state],
  examples: ["reef kv put a 1", "reef kv get a", "reef kv state -o json"]
})
