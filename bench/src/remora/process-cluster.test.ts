import type { RemoraClient, Submitted } from "@reef/coordinator"
import { Receipt, RejectReason, Transaction } from "@reef/proto"
import { describe, expect, it } from "vitest"
import { runLoad } from "./process-cluster.js"

/** A client that answers each submission at once with `answer(n)` (n: its submission count), or never. */
const fakeClient = (answer: (n: number) => Submitted | undefined): RemoraClient => {
  let n = 0
  return {
    submitCallback: (_tx, done) => {
      const outcome = answer(n++)
      if (outcome !== undefined) setImmediate(() => done(outcome))
    }
  } as RemoraClient
}

const executed = (seq: number): Submitted => ({
  _tag: "Executed",
  txId: `t${seq}`,
  receipt: Receipt.fromPartial({ seq, leaseTransfers: seq % 3, worker: "w1" })
})

describe("runLoad", () => {
  it("closed loop: keeps `inFlight` outstanding, retries what is turned away, and ends when all are answered", async () => {
    const overloaded: Submitted = {
      _tag: "Rejected",
      txId: "x",
      rejection: { reason: RejectReason.REJECT_REASON_OVERLOADED, detail: "" } as never
    }
    // Every third submission is turned away once (retried), the others executed.
    const client = fakeClient((n) => (n % 3 === 2 ? overloaded : executed(n)))
    const seen: Array<number> = []
    const submitted: Array<number> = []
    const load = runLoad({
      client,
      pace: { inFlight: 4 },
      total: 30,
      next: () => Transaction.fromPartial({}),
      onSubmit: (n) => submitted.push(n),
      onReceipt: (n, _at, latencyMs) => {
        expect(latencyMs).toBeGreaterThanOrEqual(0)
        seen.push(n)
      },
      retryMs: 1
    })
    expect(submitted).toEqual([0, 1, 2, 3])
    expect(await load.done(60_000)).toEqual({ answered: 30, submitted: 30 })
    expect([...seen].sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i))
    expect(submitted).toEqual(Array.from({ length: 30 }, (_, i) => i))
  })

  it("gives up once nothing is answered for the timeout (a dead coordinator) instead of waiting forever", async () => {
    const load = runLoad({
      client: fakeClient(() => undefined),
      pace: { inFlight: 3 },
      total: 10,
      next: () => Transaction.fromPartial({}),
      onReceipt: () => {}
    })
    expect(await load.done(50)).toEqual({ answered: 0, submitted: 3 })
    load.stop()
  })

  it("a refusal that is no back-pressure is reported, not retried", async () => {
    const refused: Array<RejectReason> = []
    const load = runLoad({
      client: fakeClient(() => ({
        _tag: "Rejected",
        txId: "x",
        rejection: { reason: RejectReason.REJECT_REASON_MALFORMED, detail: "" } as never
      })),
      pace: { rateTps: 100_000 },
      total: 5,
      next: () => Transaction.fromPartial({}),
      onReceipt: () => {},
      onRejected: (_n, reason) => refused.push(reason)
    })
    expect(await load.done(60_000)).toEqual({ answered: 5, submitted: 5 })
    expect(refused).toHaveLength(5)
  })
})
