import { describe, expect, it } from "vitest"
import { TurnBatcher } from "./turn-batcher.js"

/** Resolves after the current turn's setImmediate callbacks have run. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

const recording = <T>(options: Omit<ConstructorParameters<typeof TurnBatcher<T>>[0], "flush"> = {}) => {
  const batches: Array<Array<T>> = []
  const batcher = new TurnBatcher<T>({ ...options, flush: (items) => batches.push(items) })
  return { batcher, batches }
}

describe("TurnBatcher", () => {
  it("sends what one turn added as one batch when the turn ends, in order", async () => {
    const { batcher, batches } = recording<number>()
    batcher.add(1)
    batcher.add(2)
    batcher.add(3)
    expect(batches).toEqual([])
    expect(batcher.pending).toBe(3)
    await nextTurn()
    expect(batches).toEqual([[1, 2, 3]])
    batcher.add(4)
    await nextTurn()
    expect(batches).toEqual([[1, 2, 3], [4]])
  })

  it("sends nothing for a turn that added nothing", async () => {
    const { batcher, batches } = recording<number>()
    batcher.add(1)
    batcher.flush()
    await nextTurn()
    await nextTurn()
    expect(batches).toEqual([[1]])
  })

  it("never lets a batch go over maxSize: an item that would overflow it sends the batch first", async () => {
    const { batcher, batches } = recording<string>({ sizeOf: (s) => s.length, maxSize: 10 })
    batcher.add("aaaa")
    batcher.add("bbbb")
    batcher.add("cccc") // 12 > 10: "aaaa" and "bbbb" leave now
    expect(batches).toEqual([["aaaa", "bbbb"]])
    batcher.add("dddddd") // exactly 10: leaves at once with "cccc"
    expect(batches).toEqual([
      ["aaaa", "bbbb"],
      ["cccc", "dddddd"]
    ])
    batcher.add("e")
    await nextTurn()
    expect(batches).toEqual([["aaaa", "bbbb"], ["cccc", "dddddd"], ["e"]])
  })

  it("sends an item larger than maxSize alone, at once", () => {
    const { batcher, batches } = recording<string>({ sizeOf: (s) => s.length, maxSize: 4 })
    batcher.add("ab")
    batcher.add("0123456789")
    expect(batches).toEqual([["ab"], ["0123456789"]])
    expect(batcher.pending).toBe(0)
    expect(batcher.pendingSize).toBe(0)
  })

  it("bounds the item count with maxItems", async () => {
    const { batcher, batches } = recording<number>({ maxItems: 2 })
    for (let i = 1; i <= 5; i++) batcher.add(i)
    expect(batches).toEqual([
      [1, 2],
      [3, 4]
    ])
    await nextTurn()
    expect(batches).toEqual([[1, 2], [3, 4], [5]])
  })

  it("microtask batches leave before the next macrotask", async () => {
    const { batcher, batches } = recording<number>({ schedule: "microtask" })
    batcher.add(1)
    batcher.add(2)
    await Promise.resolve()
    expect(batches).toEqual([[1, 2]])
  })

  it("hands each batch over as a fresh array the receiver may keep", async () => {
    const { batcher, batches } = recording<number>()
    batcher.add(1)
    batcher.flush()
    batcher.add(2)
    await nextTurn()
    expect(batches[0]).not.toBe(batches[1])
    expect(batches).toEqual([[1], [2]])
  })

  it("clear drops what is waiting and returns it", async () => {
    const { batcher, batches } = recording<number>({ sizeOf: () => 3 })
    batcher.add(1)
    batcher.add(2)
    expect(batcher.pendingSize).toBe(6)
    expect(batcher.clear()).toEqual([1, 2])
    expect(batcher.pendingSize).toBe(0)
    await nextTurn()
    expect(batches).toEqual([])
  })

  it("refuses bounds that cannot hold anything", () => {
    expect(() => new TurnBatcher({ flush: () => {}, maxSize: 0 })).toThrow(RangeError)
    expect(() => new TurnBatcher({ flush: () => {}, maxItems: 0 })).toThrow(RangeError)
  })
})
