import { describe, expect, it } from "vitest"
import {
  actorSubject,
  addressProblem,
  anyInstanceSubject,
  broadcastSubject,
  presenceSubject,
  presenceWildcard,
  subjectMatches
} from "./subjects.js"

const w1 = { cluster: "dev", role: "worker", id: "w1" }

describe("subject scheme", () => {
  it("gives each address, role queue and broadcast its own subject", () => {
    expect(actorSubject(w1)).toBe("reef.dev.worker.w1")
    expect(anyInstanceSubject("dev", "worker")).toBe("reef.dev.worker.any")
    expect(broadcastSubject("dev", "worker")).toBe("reef.dev.worker.all")
    expect(presenceSubject(w1)).toBe("reef.dev.$presence.worker.w1")
  })

  it("rejects tokens that would break the subject scheme", () => {
    expect(addressProblem(w1)).toBeUndefined()
    expect(addressProblem({ ...w1, id: "a.b" })).toMatch(/id/)
    expect(addressProblem({ ...w1, role: "w*" })).toMatch(/role/)
    expect(addressProblem({ ...w1, cluster: "" })).toMatch(/cluster/)
    expect(addressProblem({ ...w1, id: "any" })).toMatch(/reserved/)
    expect(addressProblem({ ...w1, id: "all" })).toMatch(/reserved/)
    expect(addressProblem({ ...w1, role: "$presence" })).toMatch(/reserved/)
  })

  it("matches NATS wildcards like the server does", () => {
    expect(subjectMatches("reef.dev.worker.w1", "reef.dev.worker.w1")).toBe(true)
    expect(subjectMatches("reef.dev.*.w1", "reef.dev.worker.w1")).toBe(true)
    expect(subjectMatches("reef.dev.*", "reef.dev.worker.w1")).toBe(false)
    expect(subjectMatches(presenceWildcard("dev"), presenceSubject(w1))).toBe(true)
    expect(subjectMatches("reef.>", "reef")).toBe(false)
    expect(subjectMatches("reef.dev.worker", "reef.dev.worker.w1")).toBe(false)
  })
})
