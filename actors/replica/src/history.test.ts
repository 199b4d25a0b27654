import { describe, expect, it } from "vitest"
import { formatEntry, HistoryRecorder } from "./history.js"

describe("HistoryRecorder", () => {
  it("records invocations with their outputs and times, in invocation order", () => {
    const recorder = new HistoryRecorder()
    const set = recorder.invoke("c1", { _tag: "Set", key: "k", value: "a" }, 1)
    const get = recorder.invoke("c2", { _tag: "Get", key: "k" }, 2)
    recorder.complete(get, { found: true, value: "a" }, 4)
    recorder.complete(set, { ok: true }, 5)
    expect(recorder.entries()).toEqual([
      { process: "c1", op: { _tag: "Set", key: "k", value: "a", output: { ok: true } }, invokeMs: 1, completeMs: 5 },
      { process: "c2", op: { _tag: "Get", key: "k", output: { found: true, value: "a" } }, invokeMs: 2, completeMs: 4 }
    ])
  })

  it("keeps ambiguous and still-pending operations without a completion, drops definite failures", () => {
    const recorder = new HistoryRecorder()
    const timedOut = recorder.invoke(1, { _tag: "Set", key: "k", value: "a" }, 1)
    const rejected = recorder.invoke(2, { _tag: "Cas", key: "k", expected: null, value: "b" }, 2)
    recorder.invoke(3, { _tag: "Delete", key: "k" }, 3)
    recorder.fail(timedOut, true)
    recorder.fail(rejected, false)
    expect(recorder.entries()).toEqual([
      { process: 1, op: { _tag: "Set", key: "k", value: "a" }, invokeMs: 1 },
      { process: 3, op: { _tag: "Delete", key: "k" }, invokeMs: 3 }
    ])
  })

  it("rejects malformed recordings: finishing twice, completing before invoking, a mismatched output", () => {
    const recorder = new HistoryRecorder()
    const get = recorder.invoke(1, { _tag: "Get", key: "k" }, 10)
    expect(() => recorder.complete(get, { found: false }, 9)).toThrow(/before its invocation/)
    // The output type follows the input; a cast stands in for an untyped caller.
    expect(() => recorder.complete(get, { existed: true } as never, 11)).toThrow(/does not fit a Get/)
    recorder.complete(get, { found: false }, 11)
    expect(() => recorder.fail(get, true)).toThrow(/already finished/)
  })

  it("formats entries for failure reports", () => {
    expect(
      formatEntry({
        process: 2,
        op: { _tag: "Cas", key: "k", expected: "a", value: "b", output: { swapped: false, current: null } },
        invokeMs: 1,
        completeMs: 2.25
      })
    ).toBe('p2 [1.0, 2.3] cas("k", "a" → "b") → not swapped, current absent')
    expect(formatEntry({ process: 1, op: { _tag: "Set", key: "k", value: "x" }, invokeMs: 3 })).toBe(
      'p1 [3.0, …) set("k", "x") → ?'
    )
  })
})
