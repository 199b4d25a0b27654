import { POLICIES } from "@reef/remora"
import { describe, expect, it } from "vitest"
import { POLICY_CHOICES } from "./coordinator.js"

describe("reef run coordinator", () => {
  it("offers exactly the placement policies the coordinator core has", () => {
    expect([...POLICY_CHOICES]).toEqual([...POLICIES])
  })
})
