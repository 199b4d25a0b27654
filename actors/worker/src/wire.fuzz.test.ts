/**
 * What Remora's roles decode from the bus: a worker's stateless and stateful tasks, a symmetric block (each
 * worker admits its transactions), completions, and a coordinator's admission of a submitted transaction
 * (protobuf, then its body and each contract's arguments). Hostile bytes give a typed refusal (a
 * MalformedMessageError, a string reason, a rejection) or a value the role can act on, never a crash.
 */
import { CodecRegistry, MalformedMessageError } from "@reef/kernel"
import { type FuzzTarget, fuzzDecoders, fuzzRuns } from "@reef/kernel/fuzz"
import { Completion, SymmetricBlock, Transaction, TransactionBody } from "@reef/proto"
import { admit, bodySource, CONTRACTS, fakeSigner, Prng, transactionStream, type WorkloadSpec } from "@reef/remora"
import {
  completionFromWire,
  statefulTaskCodec,
  statelessTaskCodec,
  symmetricFromWire,
  symmetricToWire
} from "@reef/remora/shell"
import * as Either from "effect/Either"
import { expect, it } from "vitest"

const costs = { statelessCostUs: 10, statefulCostUs: 20 }
const specs: ReadonlyArray<WorkloadSpec> = [
  { kind: "ycsb", keys: 1000, objectsPerTx: 4, zipf: 0.9, ...costs },
  { kind: "token", accounts: 1000, zipf: 0.5, maxAmount: 100, ...costs },
  { kind: "tpcc", warehouses: 2, newOrderShare: 0.5, ...costs }
]
const transactions = specs.flatMap((spec) => {
  const prng = new Prng(3)
  const next = transactionStream(bodySource(spec, prng), fakeSigner, prng, 0, `${spec.kind}-`)
  return [next().tx, next().tx]
})
const admittedTxs = transactions.map((tx) => {
  const a = admit(tx)
  if (!a.ok) throw new Error(`seed transaction refused: ${a.rejection.message}`)
  return a.meta
})

const stateless = statelessTaskCodec
const stateful = statefulTaskCodec("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "9f2c")
// The types a worker's and a coordinator's registries hold.
const registry = new CodecRegistry([stateless, stateful, SymmetricBlock, Completion, Transaction])
const left = (o: unknown) => Either.isEither(o) && Either.isLeft(o) && o.left instanceof MalformedMessageError

const taskTargets: Array<FuzzTarget<unknown>> = [
  {
    name: "Remora stateless task (worker)",
    decode: (bytes) => registry.decode(stateless.$type, bytes, "fuzz"),
    refused: left,
    seeds: admittedTxs.map((tx, i) => stateless.encode({ tx: tx as never, proposal: i, pushTo: "w2" }).finish()),
    protobuf: true
  },
  {
    name: "Remora stateful task (worker)",
    decode: (bytes) => registry.decode(stateful.$type, bytes, "fuzz"),
    refused: left,
    seeds: admittedTxs.map((tx, i) =>
      stateful
        .encode({
          seq: 70_000 + i,
          tx: tx as never,
          versions: [3, 2 ** 33],
          sources: ["w2", "#genesis"],
          tokenSource: "w5",
          tokenPushed: true,
          combined: false,
          watermark: 69_000,
          height: 12,
          epoch: 4,
          generation: 2
        })
        .finish()
    ),
    protobuf: true
  },
  {
    name: "Remora symmetric block (worker)",
    decode: (bytes) => {
      const block = registry.decode(SymmetricBlock.$type, bytes, "fuzz")
      return Either.isLeft(block) ? block : symmetricFromWire(block.right as SymmetricBlock)
    },
    refused: (o) => typeof o === "string" || left(o),
    seeds: [
      SymmetricBlock.encode(symmetricToWire(5, 2, admittedTxs as never, ["w1", "w2"], 4, 100)).finish(),
      SymmetricBlock.encode(symmetricToWire(1, 1, [], ["w1"], 0, 0)).finish()
    ],
    protobuf: true
  },
  {
    name: "Remora completion (coordinator)",
    decode: (bytes) => {
      const c = registry.decode(Completion.$type, bytes, "fuzz")
      return Either.isLeft(c) ? c : (completionFromWire(c.right as Completion) ?? "unknown status")
    },
    refused: (o) => typeof o === "string" || left(o),
    seeds: [Completion.encode({ seq: 9, status: 1, leaseTransfers: 2, detail: "ok" }).finish()],
    protobuf: true
  },
  {
    name: "Remora submitted transaction (coordinator admission)",
    decode: (bytes) => {
      const tx = registry.decode(Transaction.$type, bytes, "fuzz")
      return Either.isLeft(tx) ? tx : admit(tx.right as Transaction)
    },
    refused: (o) => left(o) || (o as { ok?: boolean }).ok === false,
    seeds: transactions.map((tx) => Transaction.encode(tx).finish()),
    protobuf: true
  }
]

it("refuses hostile task, block, completion and transaction bytes or yields what a role acts on", () => {
  const reports = fuzzDecoders(taskTargets, fuzzRuns())
  for (const r of reports) expect(r.accepted + r.refused).toBe(fuzzRuns())
}, 300_000)

it("refuses hostile contract arguments or admits a transaction whose accesses match its sets", () => {
  const bodies = transactions.map((tx) => TransactionBody.decode(tx.body))
  const targets = [...CONTRACTS.values()].map(
    (contract): FuzzTarget<unknown> => ({
      name: `Remora ${contract.name} arguments (decodeArgs, checkArgs, accesses)`,
      decode: (args) => {
        let parsed: unknown
        try {
          parsed = contract.decodeArgs(args)
        } catch (e) {
          // Admission turns this into an INVALID_ARGUMENTS rejection.
          return `arguments do not decode: ${(e as Error).message}`
        }
        const problem = contract.checkArgs(parsed)
        if (problem !== undefined) return problem
        const body = bodies.find((b) => b.call?.contract === contract.name)!
        return contract.accesses(parsed, { readSet: body.readSet, writeSet: body.writeSet })
      },
      refused: (o) => typeof o === "string",
      seeds: bodies.filter((b) => b.call?.contract === contract.name).map((b) => b.call!.args),
      protobuf: true
    })
  )
  expect(targets.every((t) => t.seeds.length > 0)).toBe(true)
  const reports = fuzzDecoders(targets, fuzzRuns())
  for (const r of reports) expect(r.accepted + r.refused).toBe(fuzzRuns())
}, 300_000)
