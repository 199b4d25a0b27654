import { describe, expect, it } from "vitest"
import { parseTxn } from "./airdb.js"

describe("reef airdb txn's script", () => {
  it("parses conditions, reads, writes and deletes in order", () => {
    const ops = parseTxn("if a = 1; if lock absent; get b; put c hello world; del d")
    expect(typeof ops).not.toBe("string")
    expect((ops as ReadonlyArray<{ op?: { $case: string } }>).map((o) => o.op?.$case)).toEqual([
      "compare",
      "compare",
      "read",
      "put",
      "delete"
    ])
    const put = (ops as ReadonlyArray<{ op?: { $case: string; value: { value?: Buffer } } }>)[3]!.op!.value.value!
    expect(put.toString()).toBe("hello world")
  })

  it("says what is wrong with a bad operation", () => {
    expect(parseTxn("get")).toMatch(/names a key/)
    expect(parseTxn("frob a")).toMatch(/expected get K, put K V/)
    expect(parseTxn(" ; ")).toBe("an empty transaction")
  })
})
