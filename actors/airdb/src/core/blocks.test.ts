import { describe, expect, it } from "vitest"
import {
  type BlockRef,
  blocksInRange,
  cutBlocks,
  findBlock,
  findInBlock,
  type KeyStateEntry,
  mergeSortedRuns,
  utf8Length
} from "./blocks.js"

const entry = (key: string, value = "v".repeat(100), modified = 1): KeyStateEntry => [
  key,
  { value: new TextEncoder().encode(value), modified }
]
const keys = Array.from({ length: 200 }, (_, i) => `key-${String(i).padStart(4, "0")}`)

describe("snapshot blocks and their index (§3.2)", () => {
  const blocks = cutBlocks(
    keys.map((k) => entry(k)),
    1024
  )
  const index: Array<BlockRef> = blocks.map((b, i) => ({ firstKey: b[0]![0], position: i, length: 0, keys: b.length }))

  it("cuts key states, in order, into blocks of about the target size", () => {
    expect(blocks.flat().map((e) => e[0])).toEqual(keys)
    for (const b of blocks.slice(0, -1)) expect(b.length).toBe(8)
    expect(cutBlocks([entry("big", "x".repeat(5000))], 1024)).toHaveLength(1)
  })

  it("finds a key with one index search and one block: logarithmic I/O in the size of Φ", () => {
    for (const k of keys) {
      const b = findBlock(index, k)
      expect(findInBlock(blocks[b]!, k)).toBeDefined()
    }
    expect(findBlock(index, "a")).toBe(-1)
    expect(findInBlock(blocks[findBlock(index, "key-0003x")]!, "key-0003x")).toBeUndefined()
  })

  it("lists the blocks a range needs", () => {
    expect(blocksInRange(index, "key-0010", "key-0020")).toEqual([1, 2])
    expect(blocksInRange(index, "key-0010", "key-0016")).toEqual([1, 1])
    expect(blocksInRange(index, "", undefined)).toEqual([0, blocks.length - 1])
    expect(blocksInRange(index, "zzz", undefined)).toEqual([blocks.length - 1, blocks.length - 1])
    expect(blocksInRange(index, "a", "b")).toBeUndefined()
  })

  it("merges sorted runs with the newer one winning (⊕ over stored snapshots)", () => {
    const older = [entry("a", "1"), entry("c", "1"), entry("e", "1")]
    const newer = [entry("b", "2"), entry("c", "2"), entry("f", "2")]
    const merged = [...mergeSortedRuns(older, newer)].map(([k, s]) => `${k}=${new TextDecoder().decode(s.value)}`)
    expect(merged).toEqual(["a=1", "b=2", "c=2", "e=1", "f=2"])
  })

  it("counts UTF-8 bytes as the encoder does", () => {
    for (const s of ["", "abc", "é", "€", "𝄞", "a𝄞é€"]) expect(utf8Length(s)).toBe(new TextEncoder().encode(s).length)
  })
})
