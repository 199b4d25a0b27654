import { describe, expect, it } from "vitest"
import { initialSchedule, isValidMembers, membersAt, scheduleAfterDecision } from "./membership.js"
import { clientValue, membershipValue } from "./value.js"

/** Every process of these tests is in its first (and only) incarnation. */
const TEST_INCARNATION = "0000000000000001"

describe("membership schedule", () => {
  const base = initialSchedule(["p2", "p0", "p1"])

  it("keeps N = 2t+1: only odd lists of distinct ids are members", () => {
    expect(isValidMembers(["a", "b", "c"])).toBe(true)
    expect(isValidMembers(["a", "b"])).toBe(false)
    expect(isValidMembers(["a", "a", "b"])).toBe(false)
    expect(() => initialSchedule(["a", "b"])).toThrow()
    expect(membersAt(base, 1)).toEqual(["p0", "p1", "p2"])
  })

  it("Recoveries are treated as process joins resulting from membership changes proposed and agreed upon through ckcuc: decided in k, effective at k + delay", () => {
    const change = membershipValue("p0", TEST_INCARNATION, 4, ["p0", "p1", "p2", "p3", "p4"])
    const s = scheduleAfterDecision(base, 7, [clientValue("p1", TEST_INCARNATION, 0, new Uint8Array(1)), change], 2)
    expect(membersAt(s, 8)).toEqual(["p0", "p1", "p2"])
    expect(membersAt(s, 9)).toEqual(["p0", "p1", "p2", "p3", "p4"])
    expect(membersAt(s, 100)).toEqual(["p0", "p1", "p2", "p3", "p4"])
  })

  it("several commands in one decided set: the last in canonical order wins; invalid ones are ignored everywhere alike", () => {
    const a = membershipValue("p0", TEST_INCARNATION, 1, ["p0", "p1", "p3"])
    const b = membershipValue("p1", TEST_INCARNATION, 1, ["p0", "p1", "p4"])
    const invalid = membershipValue("p2", TEST_INCARNATION, 1, ["p0", "p1"])
    const s = scheduleAfterDecision(base, 1, [b, invalid, a], 2)
    expect(membersAt(s, 3)).toEqual(["p0", "p1", "p4"])
    expect(scheduleAfterDecision(base, 1, [invalid], 2)).toBe(base)
  })

  it("drops epochs no later instance can use", () => {
    let s = scheduleAfterDecision(base, 1, [membershipValue("p0", TEST_INCARNATION, 0, ["p0", "p1", "p3"])], 2)
    expect(s.epochs).toHaveLength(2) // instance 2 still runs with the old members
    s = scheduleAfterDecision(s, 2, [], 2)
    expect(s.epochs).toEqual([{ fromInstance: 3, members: ["p0", "p1", "p3"] }])
  })
})
