import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  ChainContext,
  chainSpec,
  compressHint,
  contractsOf,
  defaultWorkload,
  executeAsPrimary,
  extendChain,
  generateBlock,
  type Hint,
  HintRecorder,
  KEY_BYTES,
  type PrimaryBlock,
  Prng,
  Source,
  StateReader,
  StoreState,
  type StoreTables,
  serializeHint,
  testStore
} from "@reef/chain"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { replayBaseline } from "./baseline.js"
import { type BlockReplay, type ReplayBlock, replay, takeFromArray } from "./replayer.js"

const spec = chainSpec("test", 5)
const chain = contractsOf(spec)
const context = new ChainContext(spec.seed, spec.users)
// Smaller blocks than the calibrated workload: hundreds of blocks stay quick in CI.
const workload = { ...defaultWorkload(13), txsMedian: 50 }
const WINDOW = 200
const HEAD = 230

const dir = mkdtempSync(join(tmpdir(), "reef-backup-replay-"))
const stores: Array<StoreTables> = []
let archive: StoreTables
/** The primary's blocks re-executed on the archive (as of each parent), with their hints. */
let primary: Array<PrimaryBlock> = []

beforeAll(() => {
  archive = testStore(join(dir, "archive"), spec)
  stores.push(archive)
  extendChain(archive, spec, workload, HEAD, {}, chain)
  const reader = new StateReader(archive)
  primary = Array.from({ length: WINDOW }, (_, i) => {
    const number = i + 1
    return executeAsPrimary(
      number,
      generateBlock(chain, workload, number),
      context,
      new StoreState(reader, number - 1, HEAD)
    )
  })
}, 120_000)

afterAll(async () => {
  for (const s of stores) await s.env.close()
  rmSync(dir, { recursive: true, force: true })
})

/** The window's blocks (or its first `count`) with the hints `hintOf` gives them. */
const blocksWith = (
  hintOf: (p: PrimaryBlock, i: number) => Uint8Array | undefined,
  count = WINDOW
): Array<ReplayBlock> =>
  primary
    .slice(0, count)
    .map((p, i) => ({ number: p.number, txs: p.txs, stateHash: p.outcome.stateHash, hint: hintOf(p, i) }))
/** Variants that fail every hint the same way need fewer blocks to say so. */
const SHORT = 48

const replayArchive = async (blocks: ReadonlyArray<ReplayBlock>, readers = 3) => {
  const records: Array<BlockReplay> = []
  const summary = await Effect.runPromise(
    replay({ tables: archive, chain: context, readers, batchBlocks: 16, mode: "archive" }, takeFromArray(blocks), {
      onBlock: (r) => records.push(r)
    })
  )
  expect(summary.blocks).toBe(blocks.length)
  expect(records.map((r) => r.number)).toEqual(blocks.map((b) => b.number))
  records.forEach((r, i) => {
    expect(r.stateHash.equals(Buffer.from(blocks[i]!.stateHash)), `block ${r.number}`).toBe(true)
  })
  return { summary, records }
}

const rehint = (p: PrimaryBlock, change: (h: Hint) => Hint) => serializeHint(change(p.hint))
const sum = (records: ReadonlyArray<BlockReplay>, f: (r: BlockReplay) => number) =>
  records.reduce((s, r) => s + f(r), 0)

describe("hint-based replay reaches the primary's state hash on every block (§4.3)", () => {
  it("with honest hints: every access served from the prefetched cache", async () => {
    const { records } = await replayArchive(blocksWith((p) => p.hintFrame))
    expect(sum(records, (r) => r.misses)).toBe(0)
    expect(sum(records, (r) => r.hits)).toBeGreaterThan(0)
    expect(records.every((r) => !r.hintRejected && r.hintError === undefined)).toBe(true)
  })

  it("with no hints at all: every block runs on demand", async () => {
    const { records } = await replayArchive(blocksWith(() => undefined, SHORT))
    expect(records.every((r) => r.hintError === "missing" && r.hits === 0)).toBe(true)
  })

  it("with truncated hints: valid but missing half their keys, or cut bytes", async () => {
    const halves = await replayArchive(
      blocksWith((p) =>
        rehint(p, (h) => ({
          ...h,
          storage: h.storage.slice(0, h.storage.length >> 1),
          sources: h.sources.slice(0, h.storage.length >> 1)
        }))
      )
    )
    expect(sum(halves.records, (r) => r.misses)).toBeGreaterThan(0)
    const cut = await replayArchive(blocksWith((p) => p.hintFrame.subarray(0, p.hintFrame.length >> 1), SHORT))
    expect(cut.records.every((r) => r.hintError !== undefined)).toBe(true)
  })

  it("with shuffled hints: the order of a hint does not matter", async () => {
    const rng = new Prng(99)
    const { records } = await replayArchive(
      blocksWith((p) =>
        rehint(p, (h) => {
          const order = h.storage.map((_, i) => i).sort(() => rng.next() - 0.5)
          return {
            ...h,
            storage: order.map((i) => h.storage[i]!),
            sources: Uint8Array.from(order.map((i) => h.sources[i]!))
          }
        })
      )
    )
    expect(sum(records, (r) => r.misses)).toBe(0)
  })

  it("with corrupted hints: the zstd checksum refuses them", async () => {
    const { records } = await replayArchive(
      blocksWith((p, i) => {
        const frame = Buffer.from(p.hintFrame)
        frame[(i * 7919) % frame.length]! ^= 0x5a
        return frame
      }, SHORT)
    )
    expect(records.every((r) => r.hintError !== undefined)).toBe(true)
  })

  it("with malicious hints: spurious keys of the same size, lying sources, another block's hint", async () => {
    const rng = new Prng(7)
    const spurious = await replayArchive(
      blocksWith(
        (p) =>
          rehint(p, (h) => ({
            ...h,
            storage: h.storage.map(() =>
              Buffer.from(Array.from({ length: KEY_BYTES }, () => rng.int(256))).toString("latin1")
            )
          })),
        SHORT
      ),
      4
    )
    expect(sum(spurious.records, (r) => r.hits)).toBe(0)
    // Every change-set key claimed plain, every plain key claimed zero: values the executor would trust.
    const lying = await replayArchive(
      blocksWith((p) =>
        rehint(p, (h) => ({
          ...h,
          sources: h.sources.map((s) => (s === Source.Changeset ? Source.Plain : s === Source.Plain ? Source.Zero : s))
        }))
      )
    )
    expect(lying.summary.hintsRejected).toBeGreaterThan(0)
    expect(lying.records.filter((r) => r.hintRejected).length).toBe(lying.summary.hintsRejected)
    const shifted = await replayArchive(blocksWith((_, i) => primary[(i + 1) % primary.length]!.hintFrame, SHORT))
    expect(shifted.records.every((r) => r.hintError === "block-mismatch")).toBe(true)
    // A well-formed frame whose content is not a hint.
    const garbage = await replayArchive(blocksWith(() => compressHint(Buffer.alloc(64, "not a hint ")), SHORT))
    expect(garbage.records.every((r) => r.hintError === "bad-magic")).toBe(true)
  })

  it("matches the baseline's hashes (sequential, on demand, with reth's cross-block cache)", async () => {
    const hashes: Array<string> = []
    await Effect.runPromise(
      replayBaseline(
        { tables: archive, chain: context },
        blocksWith(() => undefined),
        (r) => hashes.push(String(r.number))
      )
    )
    expect(hashes.length).toBe(WINDOW)
  })

  it("fails loudly when the primary's hash is not the block's", async () => {
    const blocks = blocksWith((p) => p.hintFrame, SHORT)
    const bad = blocks.map((b) => (b.number === 37 ? { ...b, stateHash: Buffer.alloc(32, 1) } : b))
    const exit = await Effect.runPromiseExit(
      replay({ tables: archive, chain: context, readers: 2, batchBlocks: 16, mode: "archive" }, takeFromArray(bad))
    )
    expect(Exit.isFailure(exit) && Cause.failureOption(exit.cause)).toEqual(
      Option.some(expect.objectContaining({ _tag: "BackupDivergedError", block: 37 }))
    )
  })
})

describe("a following backup (its own store, committing each verified block)", () => {
  it("converges to the primary's state from genesis, with live hints", async () => {
    const primaryStore = testStore(join(dir, "primary"), spec)
    const backupStore = testStore(join(dir, "backup"), spec)
    stores.push(primaryStore, backupStore)
    const recorder = new HintRecorder()
    const blocks: Array<ReplayBlock> = []
    extendChain(
      primaryStore,
      spec,
      workload,
      120,
      {
        optionsFor: () => ({ recorder }),
        onBlock: (o) =>
          blocks.push({
            number: o.number,
            txs: generateBlock(chain, workload, o.number),
            stateHash: o.stateHash,
            hint: serializeHint(recorder.take(o.number))
          })
      },
      chain
    )
    const records: Array<BlockReplay> = []
    await Effect.runPromise(
      replay(
        { tables: backupStore, chain: context, readers: 3, batchBlocks: 8, mode: "follow" },
        takeFromArray(blocks),
        {
          onBlock: (r) => records.push(r)
        }
      )
    )
    expect(sum(records, (r) => r.misses)).toBe(0)
    expect(new StateReader(backupStore).head()).toBe(120)
    const plain = (t: StoreTables) =>
      [...t.plain.getRange({})].map(({ key, value }) => `${key.toString("hex")}=${value.toString("hex")}`)
    expect(plain(backupStore)).toEqual(plain(primaryStore))
  })
})
