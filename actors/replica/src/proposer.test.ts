import { HandlerError } from "@reef/kernel"
import type { NicEngine } from "@reef/nic"
import { ErrorCode, KvBatch } from "@reef/proto"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { type Applied, Proposer, type ReadPoint } from "./proposer.js"

/** An engine that records what is proposed (the only part of NicEngine the proposer uses). */
const recordingEngine = () => {
  const proposed: Array<KvBatch> = []
  const engine = {
    propose: (payload: Uint8Array) => void proposed.push(KvBatch.decode(payload))
  } as unknown as NicEngine
  return { engine, proposed }
}

const notServing = () => new HandlerError({ code: ErrorCode.ERROR_CODE_UNAVAILABLE, message: "not serving yet" })
const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

describe("proposer", () => {
  it("refuses every call with UNAVAILABLE until the replica serves, proposing nothing", async () => {
    const { engine, proposed } = recordingEngine()
    const proposer = new Proposer<undefined>(
      () => engine,
      notServing,
      () => {}
    )
    const outcomes: Array<unknown> = []
    proposer.submit({ $case: "delete", value: { key: "k" } }, (o) => outcomes.push(o))
    proposer.awaitReadPoint((p) => outcomes.push(p))
    await nextTurn()
    expect(outcomes.map((o) => (o instanceof HandlerError ? o.code : o))).toEqual([
      ErrorCode.ERROR_CODE_UNAVAILABLE,
      ErrorCode.ERROR_CODE_UNAVAILABLE
    ])
    expect(proposed).toEqual([])
  })

  it("proposes the commands of one turn as one batch and answers each by its request id", async () => {
    const { engine, proposed } = recordingEngine()
    const proposer = new Proposer<undefined>(
      () => engine,
      notServing,
      () => {}
    )
    proposer.serve()
    const answers: Array<Applied<undefined> | HandlerError> = []
    proposer.submit({ $case: "delete", value: { key: "a" } }, (o) => answers.push(o))
    proposer.submit({ $case: "delete", value: { key: "b" } }, (o) => answers.push(o))
    await nextTurn()
    expect(proposed).toHaveLength(1)
    const [first, second] = proposed[0]!.commands
    proposer.onApplied(second!, { _tag: "Delete", existed: true }, 9, undefined)
    proposer.onApplied(first!, { _tag: "Delete", existed: false }, 9, undefined)
    expect(answers).toEqual([
      { result: { _tag: "Delete", existed: true }, instance: 9, span: undefined },
      { result: { _tag: "Delete", existed: false }, instance: 9, span: undefined }
    ])
    expect(proposer.waitingCount).toBe(0)
  })

  it("after a snapshot restore waiting calls fail and a late barrier answers no later read", async () => {
    const { engine, proposed } = recordingEngine()
    const proposer = new Proposer<undefined>(
      () => engine,
      notServing,
      () => {}
    )
    proposer.serve()
    const reads: Array<ReadPoint<undefined> | HandlerError> = []
    proposer.awaitReadPoint((p) => reads.push(p))
    const write: Array<unknown> = []
    proposer.submit({ $case: "delete", value: { key: "k" } }, (o) => write.push(o))
    await nextTurn()
    const lost = new HandlerError({ code: ErrorCode.ERROR_CODE_UNAVAILABLE, message: "outcome unknown" })
    proposer.failWaiting(lost)
    expect(reads).toHaveLength(1)
    expect(write).toEqual([lost])
    // A read after the restore waits for a new barrier; the old one, decided late, does not answer it.
    proposer.awaitReadPoint((p) => reads.push(p))
    const barriers = proposed.flatMap((b) => b.commands).filter((c) => c.op?.$case === "readBarrier")
    expect(barriers.map((b) => b.request)).toEqual([1, 2])
    proposer.onApplied(barriers[0]!, { _tag: "ReadBarrier" }, 20, undefined)
    expect(reads).toHaveLength(1)
    proposer.onApplied(barriers[1]!, { _tag: "ReadBarrier" }, 21, undefined)
    expect(reads[1]).toEqual({ instance: 21, span: undefined })
  })

  it("a membership value applied before its caller waits is still found by identity", async () => {
    const proposer = new Proposer<undefined>(
      () => undefined,
      notServing,
      () => {}
    )
    proposer.onMembershipApplied({ engine: 0, seq: 4 }, 17)
    expect(await Effect.runPromise(proposer.awaitMembership({ engine: 0, seq: 4 }))).toBe(17)
    const later = Effect.runPromise(proposer.awaitMembership({ engine: 0, seq: 5 }))
    proposer.onMembershipApplied({ engine: 0, seq: 6 }, 18)
    proposer.onMembershipApplied({ engine: 0, seq: 5 }, 19)
    expect(await later).toBe(19)
  })
})
