import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type Receipt, TxStatus } from "@reef/proto"
import { afterEach, describe, expect, it } from "vitest"
import { DurableWriteError, lmdbDurableState } from "./durable-state.js"

const receipt = (txId: string, seq: number): Receipt => ({
  txId,
  status: TxStatus.TX_STATUS_EXECUTED,
  seq,
  height: 1,
  blockDigest: "d",
  committedAtMs: 1,
  worker: "w1",
  leaseTransfers: 0,
  detail: "",
  completedAtMs: 2,
  acceptedAtMs: 0
})

const dirs: Array<string> = []
const freshDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), "reef-durable-"))
  dirs.push(dir)
  return dir
}
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

describe("the coordinator's LMDB state", () => {
  it("a write whose commit fails once is made on a reopened environment, and survives a restart", async () => {
    const dir = await freshDir()
    const warnings: Array<string> = []
    let failures = 1
    const state = await lmdbDurableState(dir, {
      warn: (m) => warnings.push(m),
      beforeWrite: (what) => {
        if (what.includes("receipts") && failures-- > 0) throw new Error("MDB_BAD_TXN: injected")
      }
    })
    state.putReceipts([receipt("a", 1), receipt("b", 2)])
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain("reopening")
    expect(state.receipt("b")?.seq).toBe(2)
    state.setGeneration(3)
    await state.close()

    const again = await lmdbDurableState(dir)
    expect(again.receipt("a")?.seq).toBe(1)
    expect(again.restore()?.generation).toBe(4)
    await again.close()
  })

  it("a write that fails again on the reopened environment is a DurableWriteError, and nothing of it is kept", async () => {
    const dir = await freshDir()
    const state = await lmdbDurableState(dir, {
      beforeWrite: (what) => {
        if (what.includes("receipts")) throw new Error("MDB_BAD_TXN: injected")
      }
    })
    expect(() => state.putReceipts([receipt("a", 1)])).toThrow(DurableWriteError)
    expect(state.receipt("a")).toBeUndefined()
    state.setGeneration(2)
    await state.close()
    const again = await lmdbDurableState(dir)
    expect(again.receipt("a")).toBeUndefined()
    expect(again.restore()?.generation).toBe(3)
    await again.close()
  })
})
