import { describe, expect, it } from "@effect/vitest"
import { InvalidRequestError } from "@reef/grpc"
import { type Member, MemberState } from "@reef/proto"
import * as Effect from "effect/Effect"
import {
  MAX_PING_PAYLOAD_BYTES,
  MAX_PING_RELAY_HOPS,
  missingActor,
  selectMembers,
  validatePing,
  validateRole,
  watchedEvent
} from "./cluster-service.js"

const member = (role: string, id: string, state: MemberState): Member => ({
  address: { cluster: "test", role, id },
  state,
  lastHeartbeat: undefined,
  lastSeenMs: 0
})

const { MEMBER_STATE_JOINED: JOINED, MEMBER_STATE_LEFT: LEFT, MEMBER_STATE_UNSPECIFIED: UNSPECIFIED } = MemberState

/** The error of an effect expected to fail (runSync throws if it succeeds). */
const failure = <A>(effect: Effect.Effect<A, InvalidRequestError>) => Effect.runSync(Effect.flip(effect))

describe("validateRole: a role filter is empty or one subject token", () => {
  it.each(["", "counter", "kv-replica", "r_1"])("accepts %j", (role) => {
    expect(Effect.runSync(validateRole(role))).toBe(role)
  })
  it.each(["a.b", "*", ">", "a b", " counter", "x".repeat(65)])("refuses %j with a message", (role) => {
    const error = failure(validateRole(role))
    expect(error).toBeInstanceOf(InvalidRequestError)
    expect(error.field).toBe("role")
    expect(error.message).toContain("not a role name")
  })
})

describe("selectMembers", () => {
  const members = [
    member("counter", "c2", JOINED),
    member("gateway", "gw1", JOINED),
    member("counter", "c1", JOINED),
    member("counter", "c0", LEFT)
  ]
  it("lists every role sorted by role/id, without LEFT members", () => {
    expect(selectMembers(members, { role: "", includeLeft: false }).map((m) => m.address?.id)).toEqual([
      "c1",
      "c2",
      "gw1"
    ])
  })
  it("filters by role and includes LEFT members when asked", () => {
    expect(selectMembers(members, { role: "counter", includeLeft: true }).map((m) => m.address?.id)).toEqual([
      "c0",
      "c1",
      "c2"
    ])
  })
})

describe("watchedEvent", () => {
  it("keeps changes of the role, including leaving, but not members that had left before the watch", () => {
    const keep = watchedEvent("counter")
    expect(keep({ member: member("counter", "c1", JOINED), previous: UNSPECIFIED })).toBe(true)
    expect(keep({ member: member("counter", "c1", LEFT), previous: JOINED })).toBe(true)
    expect(keep({ member: member("counter", "c0", LEFT), previous: UNSPECIFIED })).toBe(false)
    expect(keep({ member: member("gateway", "gw1", JOINED), previous: UNSPECIFIED })).toBe(false)
  })
})

describe("validatePing", () => {
  const target = { cluster: "", role: "counter", id: "c1" }

  it("completes an empty cluster with the gateway's", () => {
    const ping = Effect.runSync(validatePing({ target, relay: [{ ...target, id: "c2" }], payload: "hi" }, "test"))
    expect(ping).toEqual({
      target: { cluster: "test", role: "counter", id: "c1" },
      relay: [{ cluster: "test", role: "counter", id: "c2" }],
      payload: "hi"
    })
  })

  it.each([
    ["target", { target: undefined, relay: [], payload: "" }],
    ["target", { target: { ...target, id: "a.b" }, relay: [], payload: "" }],
    ["target", { target: { ...target, id: "any" }, relay: [], payload: "" }],
    ["relay[1]", { target, relay: [target, { ...target, role: "*" }], payload: "" }],
    ["relay", { target, relay: Array.from({ length: MAX_PING_RELAY_HOPS + 1 }, () => target), payload: "" }],
    ["payload", { target, relay: [], payload: "x".repeat(MAX_PING_PAYLOAD_BYTES + 1) }]
  ])("refuses a bad %s", (field, request) => {
    const error = failure(validatePing(request, "test"))
    expect(error.field).toBe(field)
    expect(error.reason).not.toBe("")
  })

  it("accepts a payload of exactly the limit", () => {
    const payload = "x".repeat(MAX_PING_PAYLOAD_BYTES)
    expect(Effect.runSync(validatePing({ target, relay: [], payload }, "test")).payload).toBe(payload)
  })
})

describe("a Ping to an actor that is not there", () => {
  const ping = (target: string, relay: ReadonlyArray<string> = []) => {
    const address = (s: string) => ({ cluster: "test", role: s.split("/")[0]!, id: s.split("/")[1]! })
    return { target: address(target), relay: relay.map(address), payload: "" }
  }
  const members = [member("counter", "c2", JOINED), member("counter", "c1", JOINED), member("counter", "c3", LEFT)]

  it("names the actor and the ones of its role that are there", () => {
    expect(missingActor(ping("counter/c9"), members)).toBe(
      "no actor counter/c9 in cluster test (there are counter/c1, c2)"
    )
    expect(missingActor(ping("counter/c1", ["counter/c3"]), members)).toBe(
      "no actor counter/c3 in cluster test (there are counter/c1, c2)"
    )
    expect(missingActor(ping("replica/r1"), members)).toBe(
      "no actor replica/r1 in cluster test (no replica at all; roles: counter)"
    )
    expect(missingActor(ping("counter/c2", ["counter/c1"]), members)).toBeUndefined()
  })
})
