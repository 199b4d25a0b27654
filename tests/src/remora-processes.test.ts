/**
 * Remora as it runs for real: `reef run coordinator` and two `reef run worker` processes over a spawned
 * nats-server, 10,000 signed YCSB transactions (some with bad signatures) through the framed gRPC Submit
 * stream, with each consensus source: the window (rejecting and reordering some blocks) and a POPUC group of
 * three replica processes. The executed state's hash must equal the sequential reference executor's over the
 * order consensus chose. Malformed transactions sent in the same frames get their own rejection each and
 * disturb nothing else.
 */
import { type RemoraClient, receiptOrder, referenceHash, type Submitted, signedWorkload } from "@reef/coordinator"
import { type Receipt, RejectReason, TokenTransfer, type Transaction, TransactionBody, TxStatus } from "@reef/proto"
import { ed25519Signer, signingKeyFromSeed, TOKEN_CONTRACT, YCSB_CONTRACT } from "@reef/remora"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Harness, makeHarness, startNats } from "./harness.js"
import { startGroup } from "./popuc-harness.js"
import { completeState, type RemoraProcesses, startRemoraProcesses, submitAll } from "./remora-harness.js"

const TRANSACTIONS = 10_000

const signer = ed25519Signer(signingKeyFromSeed(new Uint8Array(32).fill(99)))
const signed = (body: Partial<TransactionBody> & { readonly id: string }): Transaction =>
  signer(
    TransactionBody.encode({
      readSet: [],
      writeSet: [],
      call: { contract: YCSB_CONTRACT, args: Buffer.from([8, 1]) },
      statelessCostUs: 0,
      statefulCostUs: 0,
      ...body
    }).finish(),
    true
  )

/** Bad input, one of each kind, with the reason the coordinator must give. */
const badInput = (prefix: string): ReadonlyArray<[Transaction, RejectReason]> => [
  [
    signed({
      id: `${prefix}-unknown`,
      readSet: ["ycsb/1"],
      writeSet: ["ycsb/1"],
      call: { contract: "no.such", args: Buffer.alloc(0) }
    }),
    RejectReason.REJECT_REASON_UNKNOWN_CONTRACT
  ],
  [signed({ id: `${prefix}-empty` }), RejectReason.REJECT_REASON_EMPTY_SETS],
  [
    signed({
      id: `${prefix}-oversized`,
      readSet: ["ycsb/2"],
      writeSet: ["ycsb/2"],
      call: { contract: YCSB_CONTRACT, args: Buffer.alloc(20 * 1024, 7) }
    }),
    RejectReason.REJECT_REASON_OVERSIZED
  ],
  [
    // Pays into tok/b without declaring the write.
    signed({
      id: `${prefix}-undeclared`,
      readSet: ["tok/a", "tok/b"],
      writeSet: ["tok/a"],
      call: {
        contract: TOKEN_CONTRACT,
        args: Buffer.from(TokenTransfer.encode({ from: "tok/a", to: "tok/b", amount: 1 }).finish())
      }
    }),
    RejectReason.REJECT_REASON_UNDECLARED_ACCESS
  ],
  [
    // A YCSB write that declares a token account: it would mint tokens.
    signed({ id: `${prefix}-foreign`, readSet: ["tok/a"], writeSet: ["tok/a"] }),
    RejectReason.REJECT_REASON_FOREIGN_NAMESPACE
  ]
]

/** Submits the workload with the bad input in its midst and checks every outcome and the final state. */
const runAndCheck = async (client: RemoraClient, seed: number, prefix: string) => {
  const workload = signedWorkload(
    { kind: "ycsb", keys: 2_000, objectsPerTx: 3, zipf: 0.9, statelessCostUs: 0, statefulCostUs: 0 },
    TRANSACTIONS,
    seed,
    0.05,
    `${prefix}-`
  )
  const bad = badInput(prefix)
  const middle = TRANSACTIONS / 2
  const txs = [...workload.txs.slice(0, middle), ...bad.map(([tx]) => tx), ...workload.txs.slice(middle)]
  const outcomes = await submitAll(client, txs, 2_000)

  const badOutcomes = outcomes.slice(middle, middle + bad.length)
  expect(badOutcomes.map((o) => (o._tag === "Rejected" ? RejectReason[o.rejection.reason] : o._tag))).toEqual(
    bad.map(([, reason]) => RejectReason[reason])
  )
  for (const o of badOutcomes) expect(o._tag === "Rejected" && o.rejection.message.length > 0).toBe(true)

  const receipts: Array<Receipt> = [...outcomes.slice(0, middle), ...outcomes.slice(middle + bad.length)].map(
    (o: Submitted) => {
      if (o._tag !== "Executed") throw new Error(`${o.txId} was rejected: ${o.rejection.message}`)
      return o.receipt
    }
  )
  const noOps = receipts.filter((r) => r.status === TxStatus.TX_STATUS_INVALID_SIGNATURE)
  expect(noOps.length).toBe(workload.invalid)
  expect(workload.invalid).toBeGreaterThan(0)
  expect(receipts.filter((r) => r.status === TxStatus.TX_STATUS_EXECUTED).length).toBe(TRANSACTIONS - workload.invalid)
  // Seqs are the consensus order: every one exactly once.
  expect(new Set(receipts.map((r) => r.seq)).size).toBe(TRANSACTIONS)

  // Idempotent submit: an id submitted again gets its one receipt, and is not executed again.
  const again = await Effect.runPromise(client.submit(workload.txs[10]!))
  expect(again).toEqual(outcomes[10])

  const state = await completeState(client)
  expect(state).toMatchObject({ accepted: TRANSACTIONS, rejected: bad.length, completed: TRANSACTIONS })
  expect(state.stateHash).toBe(referenceHash(receiptOrder(receipts), workload.byId))
  return state
}

const remoraCluster = (options: {
  readonly cluster: string
  readonly coordinatorArgs: (harness: Harness, natsUrl: string) => Promise<ReadonlyArray<string>>
}) => {
  const harness = makeHarness()
  const fixture = { processes: undefined as RemoraProcesses | undefined }
  beforeAll(async () => {
    const nats = await startNats(harness)
    fixture.processes = await startRemoraProcesses(harness, {
      natsUrl: nats.url,
      cluster: options.cluster,
      workers: 2,
      coordinatorArgs: await options.coordinatorArgs(harness, nats.url)
    })
  }, 90_000)
  afterAll(() => harness.close())
  return fixture
}

describe("Remora processes with the window consensus source", () => {
  const fixture = remoraCluster({
    cluster: "remora-window",
    coordinatorArgs: async () => ["--window-ms", "100", "--reject-rate", "0.05", "--reorder-rate", "0.1", "--seed", "3"]
  })

  it("executes 10,000 signed transactions with the reference executor's state; bad input is refused one by one", async () => {
    const state = await runAndCheck(fixture.processes!.client, 21, "win")
    expect(state.consensus).toMatch(/^window 100 ms/)
    expect(state.workers).toEqual(["w1", "w2"])
  }, 150_000)
})

describe("Remora processes with a POPUC group ordering the blocks", () => {
  const fixture = remoraCluster({
    cluster: "remora-popuc",
    coordinatorArgs: async (harness, natsUrl) => {
      await startGroup(harness, { n: 3, natsUrl, cluster: "remora-popuc" })
      // Found through presence, as `reef up --remora-consensus popuc` does.
      return ["--consensus", "popuc", "--popuc-group", "kv", "--popuc-min-replicas", "3"]
    }
  })

  it("executes 10,000 signed transactions with the reference executor's state; bad input is refused one by one", async () => {
    const state = await runAndCheck(fixture.processes!.client, 22, "pop")
    expect(state.consensus).toMatch(/^popuc group /)
    expect(state.blocksRejected).toBe(0)
    // 80 s measured at load average ~40 with the other tests' processes around; ~40 s at load ~25.
  }, 150_000)
})
