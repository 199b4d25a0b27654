import { EventEmitter } from "node:events"
import { describe, expect, it } from "vitest"
import { makeOutput, progressText, surviveClosedOutput } from "./output.js"

/** A stream that records what is written to it. */
const stream = (isTTY: boolean) => {
  const writes: Array<string> = []
  const s = Object.assign(new EventEmitter(), { isTTY, columns: 40, write: (text: string) => writes.push(text) > 0 })
  return { writes, stream: s as unknown as NodeJS.WriteStream }
}

describe("makeOutput", () => {
  it("on a terminal, redraws the status line under each permanent line", () => {
    const { writes, stream: s } = stream(true)
    const out = makeOutput(s, { TERM: "xterm" })
    out.status("soak: 0.5 of 1 min")
    out.line("a line")
    out.status("")
    expect(writes).toEqual(["soak: 0.5 of 1 min", "\r\x1b[2K", "a line\n", "soak: 0.5 of 1 min", "\r\x1b[2K"])
  })

  it("without a terminal, prints permanent lines only", () => {
    const { writes, stream: s } = stream(false)
    const out = makeOutput(s, {})
    out.status("soak: 0.5 of 1 min")
    out.line("a line")
    expect(out.live).toBe(false)
    expect(writes).toEqual(["a line\n"])
  })
})

describe("surviveClosedOutput", () => {
  it("a reader that went away (EPIPE) stops the output, once, instead of crashing the process", () => {
    const { writes, stream: s } = stream(false)
    let closedCalls = 0
    const closed = surviveClosedOutput(s, () => closedCalls++)
    const out = makeOutput(s, {})
    out.line("before")
    const epipe = Object.assign(new Error("write EPIPE"), { code: "EPIPE" })
    s.emit("error", epipe)
    s.emit("error", epipe)
    out.line("after")
    expect(writes).toEqual(["before\n"])
    expect([closed(), closedCalls]).toEqual([true, 1])
    // Any other error is not swallowed.
    expect(() => s.emit("error", Object.assign(new Error("boom"), { code: "EIO" }))).toThrow("boom")
  })
})

describe("progressText", () => {
  it("says the count, its share of the total and the rate", () => {
    expect(progressText("kv set", 1_200, 2_000, 2)).toBe("kv set: 1,200 of 2,000 (60%), 600/s")
  })
})
