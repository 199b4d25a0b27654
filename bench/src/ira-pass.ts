/**
 * One measured pass of the ira suite, in a process of its own (so it starts on an evicted database and its
 * peak RSS is its own): the primary re-executing the window with its hint recorder, the baseline replay, or
 * a hinted backup with k readers and honest or malicious hints. `node bench/dist/ira-pass.js '<json spec>'`;
 * the result goes to the spec's `out` file.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { type ReplayBlock, replay, replayBaseline, takeFromArray } from "@reef/backup"
import {
  ChainContext,
  type ChainScale,
  chainSpec,
  contractsOf,
  crossBlockCache,
  defaultWorkload,
  executeAsPrimary,
  generateBlock,
  HintRecorder,
  KEY_BYTES,
  openTables,
  Prng,
  readHint,
  SOURCE_NAMES,
  StateReader,
  StoreState,
  serializeHint,
  type Tx
} from "@reef/chain"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

export interface PassSpec {
  readonly kind: "primary" | "baseline" | "backup"
  readonly db: string
  readonly scale: ChainScale
  readonly chainSeed: number
  readonly workloadSeed: number
  /** Blocks replayed: [first, last]. */
  readonly first: number
  readonly last: number
  /** The store's head (past the window: the paper's historical replay). */
  readonly head: number
  /** The primary pass writes it; the others read hashes and hints from it. */
  readonly primaryFile: string
  readonly readers?: number
  readonly batchBlocks?: number
  readonly hints?: "honest" | "malicious"
  /** Emulated remote-disk delay per store seek, µs (the --latency-us what-if; absent: the real disk alone). */
  readonly latencyUs?: number
  readonly out: string
}

export interface PassResult {
  readonly kind: PassSpec["kind"]
  /** From just before the replay starts to the last block applied, the same clock on every kind of pass. */
  readonly wallMs: number
  /** Per block, in window order: when it was applied, ms after the replay started. */
  readonly doneMs: ReadonlyArray<number>
  /** Per block, in window order: execution, and (backups) time waiting for the prefetch. */
  readonly execMs: ReadonlyArray<number>
  readonly waitMs: ReadonlyArray<number>
  readonly misses: number
  readonly hits: number
  readonly hintsRejected: number
  /** The block where a backup stopped because its state hash differed from the primary's, if it did. */
  readonly divergedAt: number | undefined
  readonly maxRssMb: number
  readonly peakAnonMb: number
  readonly prefetch?: {
    readonly plain: number
    readonly changeset: number
    readonly zero: number
    readonly bytesRead: number
    readonly code: number
  }
  readonly primary?: {
    readonly constructMs: ReadonlyArray<number>
    readonly serializeMs: ReadonlyArray<number>
    readonly rawHintBytes: ReadonlyArray<number>
    readonly hintBytes: ReadonlyArray<number>
    readonly hintKeys: ReadonlyArray<number>
    readonly sources: Readonly<Record<string, number>>
  }
}

const anonMb = (): number => {
  const match = /RssAnon:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"))
  return match === null ? 0 : Number(match[1]) / 1024
}

/** Primary file: per block its number, the primary's state hash and its hint frame. */
const writePrimaryFile = (path: string, blocks: ReadonlyArray<{ number: number; hash: Buffer; hint: Buffer }>) => {
  const parts: Array<Buffer> = []
  for (const b of blocks) {
    const header = Buffer.alloc(4 + 32 + 4)
    header.writeUInt32BE(b.number, 0)
    b.hash.copy(header, 4)
    header.writeUInt32BE(b.hint.length, 36)
    parts.push(header, b.hint)
  }
  writeFileSync(path, Buffer.concat(parts))
}

const readPrimaryFile = (path: string): Map<number, { hash: Buffer; hint: Buffer }> => {
  const bytes = readFileSync(path)
  const blocks = new Map<number, { hash: Buffer; hint: Buffer }>()
  for (let at = 0; at < bytes.length; ) {
    const number = bytes.readUInt32BE(at)
    const hash = bytes.subarray(at + 4, at + 36)
    const length = bytes.readUInt32BE(at + 36)
    blocks.set(number, { hash, hint: bytes.subarray(at + 40, at + 40 + length) })
    at += 40 + length
  }
  return blocks
}

/**
 * A malicious hint of the same size (§5.5): the honest hint's contracts and source annotations, with slots
 * that exist nowhere, so every prefetch read is wasted and every access misses.
 */
const maliciousHint = (frame: Buffer, number: number, rng: Prng): Buffer => {
  const honest = readHint(frame, number)
  const storage = honest.storage.map((key) => {
    const slot = Buffer.alloc(KEY_BYTES - 20)
    for (let i = 0; i < slot.length; i++) slot[i] = rng.int(256)
    return key.slice(0, 20) + slot.toString("latin1")
  })
  return serializeHint({ ...honest, storage })
}

const main = async (spec: PassSpec): Promise<PassResult> => {
  const tables = openTables({ path: spec.db, readOnly: true })
  const chainSpecOf = chainSpec(spec.scale, spec.chainSeed)
  const chain = contractsOf(chainSpecOf)
  const context = new ChainContext(chainSpecOf.seed, chainSpecOf.users)
  const workload = defaultWorkload(spec.workloadSeed)
  const numbers = Array.from({ length: spec.last - spec.first + 1 }, (_, i) => spec.first + i)
  const txs = new Map<number, ReadonlyArray<Tx>>(numbers.map((n) => [n, generateBlock(chain, workload, n)]))
  let peakAnonMb = anonMb()
  const doneMs: Array<number> = []
  let replayStart = 0
  const applied = () => doneMs.push(performance.now() - replayStart)
  const sampleMemory = (i: number) => {
    if (i % 8 === 0) peakAnonMb = Math.max(peakAnonMb, anonMb())
  }
  const finish = (partial: Omit<PassResult, "kind" | "maxRssMb" | "peakAnonMb" | "doneMs">): PassResult => ({
    kind: spec.kind,
    doneMs,
    ...partial,
    maxRssMb: process.resourceUsage().maxRSS / 1024,
    peakAnonMb: Math.max(peakAnonMb, anonMb())
  })

  if (spec.kind === "primary") {
    const reader = new StateReader(tables)
    const cache = crossBlockCache()
    replayStart = performance.now()
    const out: Array<{ number: number; hash: Buffer; hint: Buffer }> = []
    const execMs: Array<number> = []
    const constructMs: Array<number> = []
    const serializeMs: Array<number> = []
    const rawHintBytes: Array<number> = []
    const hintBytes: Array<number> = []
    const hintKeys: Array<number> = []
    const sources = [0, 0, 0]
    numbers.forEach((number, i) => {
      // reth's source tracker for reads the cross-block cache answered: one history-index seek each.
      const recorder = new HintRecorder((key, value) => reader.sourceOf(key, number - 1, spec.head, value))
      const pre = new StoreState(reader, number - 1, spec.head, cache)
      const block = executeAsPrimary(number, txs.get(number)!, context, pre, recorder)
      for (const [key, value] of block.outcome.finalValues) cache.storage.set(key, value)
      out.push({ number, hash: block.outcome.stateHash, hint: block.hintFrame })
      execMs.push(block.execMs)
      constructMs.push(block.constructMs)
      serializeMs.push(block.serializeMs)
      rawHintBytes.push(block.rawHintBytes)
      hintBytes.push(block.hintFrame.length)
      hintKeys.push(block.hint.storage.length)
      for (const s of block.hint.sources) sources[s]!++
      applied()
      sampleMemory(i)
    })
    const wallMs = performance.now() - replayStart
    writePrimaryFile(spec.primaryFile, out)
    await tables.env.close()
    return finish({
      wallMs,
      execMs,
      waitMs: [],
      misses: 0,
      hits: 0,
      hintsRejected: 0,
      divergedAt: undefined,
      primary: {
        constructMs,
        serializeMs,
        rawHintBytes,
        hintBytes,
        hintKeys,
        sources: Object.fromEntries(sources.map((n, s) => [SOURCE_NAMES[s as 0 | 1 | 2], n]))
      }
    })
  }

  const primary = readPrimaryFile(spec.primaryFile)
  const rng = new Prng(spec.workloadSeed, 0xbad)
  const blocks: Array<ReplayBlock> = numbers.map((number) => {
    const p = primary.get(number)!
    const hint = spec.hints === "malicious" ? maliciousHint(p.hint, number, rng) : p.hint
    return { number, txs: txs.get(number)!, stateHash: p.hash, hint }
  })

  if (spec.kind === "baseline") {
    const execMs: Array<number> = []
    replayStart = performance.now()
    const exit = await Effect.runPromiseExit(
      replayBaseline({ tables, chain: context, latencyUs: spec.latencyUs ?? 0 }, blocks, (r) => {
        execMs.push(r.execMs)
        applied()
        sampleMemory(execMs.length)
      })
    )
    const wallMs = doneMs.at(-1) ?? Number.NaN
    await tables.env.close()
    const diverged = Exit.isFailure(exit) ? numbers[execMs.length] : undefined
    return finish({ wallMs, execMs, waitMs: [], misses: 0, hits: 0, hintsRejected: 0, divergedAt: diverged })
  }

  const execMs: Array<number> = []
  const waitMs: Array<number> = []
  let misses = 0
  let hits = 0
  const prefetch = { plain: 0, changeset: 0, zero: 0, bytesRead: 0, code: 0 }
  replayStart = performance.now()
  const exit = await Effect.runPromiseExit(
    replay(
      {
        tables,
        chain: context,
        readers: spec.readers ?? 16,
        batchBlocks: spec.batchBlocks ?? 32,
        mode: "archive",
        latencyUs: spec.latencyUs ?? 0
      },
      takeFromArray(blocks),
      {
        onBlock: (r) => {
          execMs.push(r.execMs)
          waitMs.push(r.waitMs)
          applied()
          misses += r.misses
          hits += r.hits
          sampleMemory(execMs.length)
        },
        onBatch: (b) => {
          prefetch.plain += b.stats.plain
          prefetch.changeset += b.stats.changeset
          prefetch.zero += b.stats.zero
          prefetch.bytesRead += b.stats.bytesRead
          prefetch.code += b.codeEntries
        }
      }
    )
  )
  const wallMs = doneMs.at(-1) ?? Number.NaN
  await tables.env.close()
  const summary = Exit.isSuccess(exit) ? exit.value : undefined
  return finish({
    wallMs: summary === undefined ? Number.NaN : wallMs,
    execMs,
    waitMs,
    misses,
    hits,
    hintsRejected: summary?.hintsRejected ?? 0,
    divergedAt: summary === undefined ? numbers[execMs.length] : undefined,
    prefetch
  })
}

const spec = JSON.parse(process.argv[2] ?? "{}") as PassSpec
const result = await main(spec)
writeFileSync(spec.out, JSON.stringify(result))
process.exit(0)
