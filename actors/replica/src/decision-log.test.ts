import { describe, expect, it } from "vitest"
import { DecisionLog } from "./decision-log.js"

const v = (seq: number) => ({ proposer: "r1", seq, kind: "client" as const, payload: new Uint8Array(), members: [] })

describe("decision log", () => {
  it("returns the decisions since an instance, empty when nothing is newer", () => {
    const log = new DecisionLog(10)
    for (let i = 1; i <= 5; i++) log.append(i, [v(i)])
    expect(log.since(4)?.map((d) => d.instance)).toEqual([4, 5])
    expect(log.since(6)).toEqual([])
  })

  it("forgets instances beyond its window and says so", () => {
    const log = new DecisionLog(3)
    for (let i = 1; i <= 5; i++) log.append(i, [])
    expect(log.since(3)?.map((d) => d.instance)).toEqual([3, 4, 5])
    expect(log.since(2)).toBeUndefined()
  })
})
