import { TokenTransfer, TpccNewOrder, TpccPayment, YcsbRmw } from "@reef/proto"
import { describe, expect, it } from "vitest"
import { admitted, bodyOf, signed } from "../test/fixtures.js"
import { asBuffer } from "../workload/generators.js"
import { executeContract } from "./execute.js"
import { genesisValue } from "./genesis.js"
import { INITIAL_TOKEN_BALANCE, tokenBalance } from "./token.js"
import { customerBalance, districtKey, districtOrders, orderLogKey, stockKey } from "./tpcc.js"

/**
 * Runs `tx` on `state` as a worker does: its inputs are Buffers (bytes decoded from the wire, whose slice() is a
 * view), and no contract may change one in place (the worker still holds that version for its epoch report).
 */
const run = (tx: ReturnType<typeof signed>, state: Map<string, Uint8Array>) => {
  const given: Array<{ readonly key: string; readonly value: Buffer; readonly before: Buffer }> = []
  const outcome = executeContract(tx, (key) => {
    const value = Buffer.from(state.get(key) ?? genesisValue(key))
    given.push({ key, value, before: Buffer.from(value) })
    return value
  })
  for (const g of given) expect(g.value.equals(g.before), `${g.key} was changed in place`).toBe(true)
  if (outcome.status === "executed") for (const [k, v] of outcome.writes) state.set(k, v)
  return outcome
}

const rmw = (id: string, keys: ReadonlyArray<string>, field: number, data: number[]) =>
  signed(bodyOf(id, keys, keys, "ycsb.rmw", YcsbRmw.encode({ field, data: asBuffer(new Uint8Array(data)) }).finish()))

describe("contracts", () => {
  it("the initial value of a key is a pure function of the key", () => {
    expect(genesisValue("ycsb/1")).toEqual(genesisValue("ycsb/1"))
    expect(genesisValue("ycsb/1")).not.toEqual(genesisValue("ycsb/2"))
    expect(genesisValue("ycsb/1").length).toBe(256)
    expect(tokenBalance(genesisValue("tok/x"))).toBe(INITIAL_TOKEN_BALANCE)
  })

  it("YCSB read-modify-write is order-sensitive, so a wrong order shows in the state", () => {
    const a = rmw("a", ["ycsb/1"], 2, [1, 2, 3])
    const b = rmw("b", ["ycsb/1"], 2, [9])
    const ab = new Map<string, Uint8Array>()
    run(a, ab)
    run(b, ab)
    const ba = new Map<string, Uint8Array>()
    run(b, ba)
    run(a, ba)
    expect(ab.get("ycsb/1")).not.toEqual(ba.get("ycsb/1"))
  })

  it("YCSB mixes in what it reads from every key, so reading a wrong version shows too", () => {
    const s1 = new Map<string, Uint8Array>()
    const s2 = new Map<string, Uint8Array>([["ycsb/2", rmwed("ycsb/2")]])
    run(rmw("x", ["ycsb/1", "ycsb/2"], 0, [5]), s1)
    run(rmw("x", ["ycsb/1", "ycsb/2"], 0, [5]), s2)
    expect(s1.get("ycsb/1")).not.toEqual(s2.get("ycsb/1"))
  })

  it("a token transfer moves the amount; an overdraft aborts without effect", () => {
    const state = new Map<string, Uint8Array>()
    const transfer = (id: string, amount: number) =>
      signed(
        bodyOf(
          id,
          ["tok/a", "tok/b"],
          ["tok/a", "tok/b"],
          "token.transfer",
          TokenTransfer.encode({ from: "tok/a", to: "tok/b", amount }).finish()
        )
      )
    expect(run(transfer("t1", 400), state).status).toBe("executed")
    expect(tokenBalance(state.get("tok/a")!)).toBe(INITIAL_TOKEN_BALANCE - 400)
    expect(tokenBalance(state.get("tok/b")!)).toBe(INITIAL_TOKEN_BALANCE + 400)
    const over = run(transfer("t2", INITIAL_TOKEN_BALANCE), state)
    expect(over.status).toBe("aborted")
    expect(tokenBalance(state.get("tok/a")!)).toBe(INITIAL_TOKEN_BALANCE - 400)
  })

  it("TPC-C NewOrder takes the district's next order id and updates stock; Payment moves money", () => {
    const state = new Map<string, Uint8Array>()
    const lines = [
      { itemId: 5, supplyWarehouseId: 1, quantity: 3 },
      { itemId: 6, supplyWarehouseId: 2, quantity: 2 }
    ]
    const order = TpccNewOrder.encode({ warehouseId: 1, districtId: 1, customerId: 7, lines }).finish()
    const tx = admitted(
      signed(
        bodyOf(
          "no1",
          ["tpcc/w/1", "tpcc/d/1/1", "tpcc/c/1/1/7", "tpcc/i/5", "tpcc/i/6"],
          ["tpcc/d/1/1", "tpcc/o/1/1", "tpcc/s/1/5", "tpcc/s/2/6"],
          "tpcc.new_order",
          order
        )
      )
    )
    expect(run(tx.payload, state).status).toBe("executed")
    expect(districtOrders(state.get(orderLogKey(1, 1))!)).toBe(1)
    expect(state.has(stockKey(2, 6))).toBe(true)
    expect(state.get(districtKey(1, 1))).not.toEqual(genesisValue(districtKey(1, 1)))
    const pay = TpccPayment.encode({
      warehouseId: 1,
      districtId: 1,
      customerWarehouseId: 1,
      customerDistrictId: 1,
      customerId: 7,
      amount: 250
    }).finish()
    const keys = ["tpcc/w/1", "tpcc/d/1/1", "tpcc/c/1/1/7"]
    run(signed(bodyOf("p1", keys, keys, "tpcc.payment", pay)), state)
    expect(customerBalance(state.get("tpcc/c/1/1/7")!)).toBe(customerBalance(genesisValue("tpcc/c/1/1/7")) - 250)
  })
})

function rmwed(key: string): Uint8Array {
  const state = new Map<string, Uint8Array>()
  run(rmw("pre", [key], 1, [7]), state)
  return state.get(key)!
}
