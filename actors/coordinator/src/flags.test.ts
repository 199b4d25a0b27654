import { describe, expect, it } from "vitest"
import { parseCoordinatorFlags } from "./flags.js"

describe("reef run coordinator flags", () => {
  it("parses the policy, the separation mode, the timings and the consensus source", () => {
    const launch = parseCoordinatorFlags("c1", "local", {
      policy: "hermes-nr",
      separation: "worker",
      stateless: "post",
      scheduling: "pre",
      "window-ms": "100",
      "execution-port": "7777"
    })
    expect(launch.consensusName).toBe("window")
    expect(launch.options).toMatchObject({
      id: "c1",
      grpcPort: 7777,
      params: {
        policy: "hermes-nr",
        separation: "worker",
        statelessTiming: "post-consensus",
        schedulingTiming: "pre-consensus"
      }
    })
  })

  it("refuses a bad value by naming the flag", () => {
    expect(() => parseCoordinatorFlags("c1", "local", { policy: "fastest" })).toThrow(/--policy must be one of/)
    expect(() => parseCoordinatorFlags("c1", "local", { "reject-rate": "2" })).toThrow(/--reject-rate/)
    expect(() => parseCoordinatorFlags("c1", "local", { consensus: "popuc" })).toThrow(/--popuc-replicas/)
  })
})
