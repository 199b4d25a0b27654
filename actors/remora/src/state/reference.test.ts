import { YcsbRmw } from "@reef/proto"
import { describe, expect, it } from "vitest"
import { genesisValue } from "../contracts/genesis.js"
import { admitted, bodyOf, signed } from "../test/fixtures.js"
import { asBuffer } from "../workload/generators.js"
import { StateDigestSum } from "./digest.js"
import { ReferenceExecutor } from "./reference.js"

const rmw = (id: string, keys: ReadonlyArray<string>, valid = true) =>
  admitted(
    signed(
      bodyOf(id, keys, keys, "ycsb.rmw", YcsbRmw.encode({ field: 0, data: asBuffer(new Uint8Array([3])) }).finish()),
      valid
    )
  )

describe("the reference executor", () => {
  it("gives every access a new version, reads included (§4.2)", () => {
    const ref = new ReferenceExecutor()
    const tx = admitted(
      signed(
        bodyOf(
          "r",
          ["ycsb/1", "ycsb/2"],
          ["ycsb/2"],
          "ycsb.rmw",
          YcsbRmw.encode({ field: 0, data: Buffer.alloc(0) }).finish()
        )
      )
    )
    ref.apply(tx, true)
    expect(ref.get("ycsb/1").version).toBe(1)
    expect(ref.get("ycsb/1").value).toEqual(genesisValue("ycsb/1"))
    expect(ref.get("ycsb/2").version).toBe(1)
    expect(ref.get("ycsb/2").value).not.toEqual(genesisValue("ycsb/2"))
  })

  it('"When Validate(T) returns invalid, the stateful step still executes but performs a no-op" that consumes versions', () => {
    const ref = new ReferenceExecutor()
    expect(ref.apply(rmw("bad", ["ycsb/1"], false), false).status).toBe("invalid-signature")
    expect(ref.get("ycsb/1")).toEqual({ version: 1, value: genesisValue("ycsb/1") })
  })
})

describe("the state digest", () => {
  it("adds up: the digests of disjoint parts merge into the digest of the whole", () => {
    const whole = new StateDigestSum().add("a", 1, new Uint8Array([1])).add("b", 3, new Uint8Array([2]))
    const part = new StateDigestSum().add("a", 1, new Uint8Array([1]))
    const other = new StateDigestSum().add("b", 3, new Uint8Array([2]))
    expect(part.merge(other.toProto()).hex()).toBe(whole.hex())
    expect(new StateDigestSum().add("a", 2, new Uint8Array([1])).hex()).not.toBe(
      new StateDigestSum().add("a", 1, new Uint8Array([1])).hex()
    )
  })
})
