/**
 * `reef tx submit|receipt|get|state`: Remora's signed transactions, etcdctl-style. The coordinator is found
 * through presence (it announces its `grpc` endpoint), or given with --execution. `submit` signs a
 * transaction with an Ed25519 key derived from --key-seed and waits for its receipt; a transaction the
 * coordinator refuses is a one-line failure that names the reason.
 */
import type { ExecutionState, Receipt } from "@reef/proto"
import * as Effect from "effect/Effect"
import { Arg, bad, group, Opt, ok } from "../cli/spec.js"
import { formatTable } from "../table.js"
import { dataCommand } from "./command.js"
import type { ObjectView } from "./object-view.js"

const target = {
  execution: Opt.address({
    description: "the coordinator's reef.v1.Execution address",
    defaultText: "the coordinator found through the gateway"
  }),
  coordinator: Opt.token({ description: "the coordinator to use (its id)", defaultText: "the first joined one" })
}

/** Keys as the admission check wants them: printable ASCII without spaces (they may contain `/`). */
const keys = (description: string) =>
  Opt.of<ReadonlyArray<string>>({
    description,
    placeholder: "KEY,...",
    defaultText: "none",
    parse: (raw) => {
      const list = raw.split(",").map((k) => k.trim())
      const wrong = list.find((k) => !/^[\x21-\x7e]{1,128}$/.test(k))
      return wrong === undefined ? ok(list) : bad(`"${wrong}" is not a key: 1-128 printable ASCII characters`)
    }
  })

/** reef.v1.TxStatus by name (this file stays free of @reef/proto's code: every `reef` command loads it). */
const TX_STATUS: Record<number, string> = { 1: "EXECUTED", 2: "INVALID_SIGNATURE", 3: "ABORTED" }

const receiptJson = (r: Receipt) => ({ ...r, status: TX_STATUS[r.status] ?? String(r.status) })

/** `balance 999995, transfers 1`; a YCSB record's fields shortened (`-o json` has them whole). */
export const fieldsText = (view: ObjectView): string =>
  Object.entries(view.fields)
    .map(([name, value]) =>
      Array.isArray(value)
        ? `${name} ${value.map((v) => `${v.slice(0, 8)}…`).join(" ")}`
        : `${name} ${typeof value === "number" ? value.toLocaleString("en-US", { useGrouping: false }) : value}`
    )
    .join(", ")

const when = (ms: number) => (ms > 0 ? `${Math.round(ms)} ms` : "-")

/** One line per receipt: what happened to the transaction, where and when. */
export const receiptText = (r: Receipt): string => {
  const status = r.status === 1 ? "executed" : r.status === 2 ? "invalid signature (no-op)" : "aborted"
  const latency = r.acceptedAtMs > 0 ? ` in ${when(r.completedAtMs - r.acceptedAtMs)}` : ""
  return (
    `${r.txId} ${status}${r.detail === "" ? "" : ` (${r.detail})`}: seq ${r.seq}, height ${r.height}, ` +
    `worker ${r.worker}, ${r.leaseTransfers} lease transfer(s)${latency}`
  )
}

const submit = dataCommand({
  name: "submit",
  command: "tx submit",
  summary: "sign a transaction and submit it; prints its receipt once it executed",
  description:
    "Contracts: ycsb (read-modify-write of --keys: field --field mixed with --data), token (--from pays " +
    "--amount to --to; accounts are tok/<name>), or any contract by name with --contract, --read, --write and " +
    "--args-hex. The body is signed with Ed25519 (a key derived from --key-seed); --bad-signature flips a bit, " +
    "so the transaction executes as a no-op that still consumes its versions (the paper's rule).",
  options: {
    ...target,
    keys: keys("ycsb: the keys read and written"),
    field: Opt.integer({ description: "ycsb: the field to update (0..7)", default: 0, min: 0, max: 7 }),
    data: Opt.text({ description: "ycsb: bytes mixed into the field (UTF-8, at most 31 bytes)", default: "reef" }),
    from: Opt.text({ description: "token: the paying account", defaultText: "none" }),
    to: Opt.text({ description: "token: the receiving account", defaultText: "none" }),
    amount: Opt.integer({ description: "token: the amount", default: 1, min: 1 }),
    contract: Opt.text({ description: "raw: the contract's name", defaultText: "none" }),
    read: keys("raw: the declared read set"),
    write: keys("raw: the declared write set"),
    "args-hex": Opt.text({ description: "raw: the contract's encoded arguments, in hex", defaultText: "none" }),
    id: Opt.text({ description: "the transaction's id (unique)", defaultText: "cli-<time>-<random>" }),
    "key-seed": Opt.text({ description: "the sender's key is derived from this text", default: "reef-cli" }),
    "bad-signature": Opt.flag({ description: "sign wrongly: the transaction executes as a no-op" }),
    "no-wait": Opt.flag({ description: "return once the coordinator accepted it (no receipt)" })
  },
  args: { kind: Arg.of({ description: "ycsb, token or raw", parse: (raw) => kindOf(raw) }) },
  examples: [
    "reef tx submit ycsb --keys ycsb/1,ycsb/2 --data hello",
    "reef tx submit token --from tok/alice --to tok/bob --amount 5 -o json",
    "reef tx submit raw --contract ycsb.rmw --read ycsb/1 --write ycsb/1 --args-hex 0801",
    "reef tx submit ycsb --keys ycsb/3 --bad-signature"
  ],
  validate: (input) => {
    if (input.kind === "ycsb" && input.keys === undefined) return "tx submit ycsb needs --keys"
    if (input.kind === "token" && (input.from === undefined || input.to === undefined))
      return "tx submit token needs --from and --to"
    if (input.kind === "raw" && input.contract === undefined) return "tx submit raw needs --contract"
    if (!/^([0-9a-fA-F]{2})*$/.test(input["args-hex"] ?? "")) return "--args-hex must be hex digits, two per byte"
    return undefined
  },
  run: (input, context) =>
    Effect.gen(function* () {
      const { executionClient, buildTransaction, submitOne } = yield* Effect.promise(() => import("./tx-client.js"))
      const client = yield* executionClient(context, input)
      const tx = buildTransaction(input)
      return yield* submitOne(client, tx, !input["no-wait"])
    }),
  text: (r) => (r.receipt === undefined ? `${r.txId} accepted` : receiptText(r.receipt)),
  json: (r) =>
    r.receipt === undefined ? { txId: r.txId, accepted: true } : { txId: r.txId, receipt: receiptJson(r.receipt) }
})

const KINDS = ["ycsb", "token", "raw"] as const
const kindOf = (raw: string) =>
  (KINDS as ReadonlyArray<string>).includes(raw)
    ? ok(raw as (typeof KINDS)[number])
    : bad(`expected one of ${KINDS.join(", ")}`)

const receipt = dataCommand({
  name: "receipt",
  command: "tx receipt",
  summary: "print the receipt of a transaction (or that it is still pending)",
  options: target,
  args: { id: Arg.key({ description: "the transaction's id" }) },
  examples: ["reef tx receipt cli-m3x9-1a2b", "reef tx receipt t17 -o json"],
  run: (input, context) =>
    Effect.gen(function* () {
      const { executionClient, receiptOf } = yield* Effect.promise(() => import("./tx-client.js"))
      return yield* receiptOf(yield* executionClient(context, input), input.id)
    }),
  text: (r) => (r.receipt === undefined ? `${r.txId} pending (accepted, not executed yet)` : receiptText(r.receipt)),
  json: (r) => ({
    txId: r.txId,
    pending: r.receipt === undefined,
    receipt: r.receipt === undefined ? null : receiptJson(r.receipt)
  })
})

const get = dataCommand({
  name: "get",
  command: "tx get",
  summary: "print an object's latest executed value, version and owner",
  options: target,
  args: { key: Arg.key({ description: "the object's key (e.g. ycsb/1, tok/alice)" }) },
  examples: ["reef tx get ycsb/1", "reef tx get tok/alice -o json"],
  run: (input, context) =>
    Effect.gen(function* () {
      const { executionClient, objectOf } = yield* Effect.promise(() => import("./tx-client.js"))
      return yield* objectOf(yield* executionClient(context, input), input.key)
    }),
  text: (r) => {
    const initial = r.version === 0 ? ", its initial value: never written" : ""
    const pending = r.assignedVersion > r.version ? `; version ${r.assignedVersion} is committed, executing` : ""
    return `${r.key} (${r.view.kind}): ${fieldsText(r.view)} (version ${r.version} at ${r.owner === "#coordinator" ? "the coordinator" : r.owner}${initial}${pending})`
  },
  json: (r) => ({
    key: r.key,
    version: r.version,
    assignedVersion: r.assignedVersion,
    owner: r.owner,
    kind: r.view.kind,
    ...r.view.fields,
    value: Buffer.from(r.value).toString("hex")
  })
})

/** The worker pool under the counters: each worker's part (active, retiring, spare) and load. */
const poolTable = (s: ExecutionState): string =>
  s.pool.length === 0
    ? ""
    : `\n\nworker pool (scale-outs ${s.scaleOuts}, scale-ins ${s.scaleIns})\n` +
      formatTable(
        ["worker", "state", "load (µs)", "incarnation"],
        s.pool.map((m) => [m.worker, m.state, m.state === "spare" ? "" : m.loadUs, m.incarnation.slice(0, 8)])
      )

const state = dataCommand({
  name: "state",
  command: "tx state",
  summary: "the coordinator's counters and the hash of the executed state",
  options: target,
  examples: ["reef tx state", "reef tx state -o json"],
  run: (input, context) =>
    Effect.gen(function* () {
      const { executionClient, stateOf } = yield* Effect.promise(() => import("./tx-client.js"))
      return yield* stateOf(yield* executionClient(context, input))
    }),
  text: (s: ExecutionState) =>
    formatTable(
      ["accepted", "rejected", "committed", "completed", "blocks", "plans adopted/recomputed", "workers", "state hash"],
      [
        [
          s.accepted,
          s.rejected,
          s.committed,
          s.completed,
          s.blocks,
          `${s.plansAdopted}/${s.plansRecomputed}`,
          s.workers.join(","),
          `${s.stateHash.slice(0, 16)}${s.complete ? "" : " (executing)"}`
        ]
      ]
    ) + poolTable(s),
  json: (s: ExecutionState) => ({ ...s, digest: undefined })
})

export const txCommands = group({
  name: "tx",
  summary: "submit Remora transactions and read receipts, objects and the executed state",
  description:
    "Talks to the Remora coordinator, found through the cluster's presence (it announces its reef.v1.Execution " +
    "endpoint). Transactions are signed with Ed25519 here; a refused one fails with its reason (exit code 1).",
  placeholder: "<command>",
  listHeading: "Commands",
  commands: [submit, receipt, get, state],
  examples: ["reef tx submit ycsb --keys ycsb/1,ycsb/2", "reef tx receipt <id>", "reef tx state -o json"]
})
