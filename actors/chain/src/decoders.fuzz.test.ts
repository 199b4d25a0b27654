/**
 * What a backup decodes of its primary's output: hint frames (zstd) and raw hints, a block's transactions, and
 * the published genesis description. Hostile bytes give the decoder's typed error or a value that encodes back
 * to exactly the bytes read (every format here is canonical).
 */
import { fuzzDecoder, fuzzRuns } from "@reef/kernel/fuzz"
import { ChainInfo } from "@reef/proto"
import { expect, it } from "vitest"
import { readHint, serializeHint } from "./hint/compression.js"
import { HintError } from "./hint/errors.js"
import { decodeHint, encodeHint, type Hint } from "./hint/format.js"
import { decodeChainInfo } from "./primary/chain-actor.js"
import { decodeTxs, encodeTxs, TxDecodeError, TxKind } from "./runtime/transactions.js"
import { ChainSpecError, chainSpec, encodeChainSpec } from "./workload/chain-spec.js"

const key = (i: number) => Buffer.alloc(52, i).toString("latin1")
const address = (i: number) => Buffer.alloc(20, i).toString("latin1")
const hints: ReadonlyArray<Hint> = [
  { block: 7, storage: [key(1), key(2), key(3)], sources: Uint8Array.from([0, 1, 2]), code: [address(9)] },
  { block: 2 ** 40, storage: [], sources: new Uint8Array(0), code: [] }
]
const isHintError = (e: unknown) => e instanceof HintError
const same = (a: Uint8Array, b: Uint8Array) => (Buffer.compare(a, b) === 0 ? undefined : "does not encode back")

it("refuses a hostile hint frame or reads a hint for its block", () => {
  const report = fuzzDecoder({
    name: "hint frame (readHint: zstd + hint codec)",
    decode: (bytes) => readHint(bytes, 7),
    refused: isHintError,
    check: (hint) => (hint.block === 7 ? undefined : `a hint for block ${hint.block}`),
    seeds: hints.map((h) => serializeHint({ ...h, block: 7 }))
  })
  expect(report.cases).toBe(fuzzRuns())
}, 300_000)

it("refuses a hostile raw hint or decodes the hint that encodes to it", () => {
  const report = fuzzDecoder({
    name: "raw hint (decodeHint)",
    decode: decodeHint,
    refused: isHintError,
    check: (hint, bytes) => same(encodeHint(hint), bytes),
    seeds: hints.map(encodeHint)
  })
  expect(report.accepted).toBeGreaterThan(0)
}, 300_000)

it("refuses a block's hostile transaction bytes or decodes the transactions that encode to them", () => {
  const txs = [
    { kind: TxKind.Transfer, sender: 1, target: 2, a: 3, b: 4, amount: 5 },
    { kind: 8 as TxKind, sender: 2 ** 32 - 1, target: 0, a: 0, b: 0, amount: 2 ** 53 - 1 }
  ]
  const report = fuzzDecoder({
    name: "block transactions (decodeTxs)",
    decode: decodeTxs,
    refused: (e) => e instanceof TxDecodeError,
    check: (decoded, bytes) => same(encodeTxs(decoded), bytes),
    seeds: [encodeTxs(txs), encodeTxs([])]
  })
  expect(report.accepted).toBeGreaterThan(0)
}, 300_000)

it("refuses a hostile genesis description or decodes a valid chain spec", () => {
  const info = (spec: Uint8Array) =>
    ChainInfo.encode({ chain: "c1", genesisSpec: Buffer.from(spec), primaryId: "p1" }).finish()
  const report = fuzzDecoder({
    name: "genesis info (decodeChainInfo: ChainInfo + chain spec JSON)",
    decode: decodeChainInfo,
    refused: (e) => e instanceof ChainSpecError,
    check: (decoded) =>
      JSON.stringify(decodeChainInfo(info(encodeChainSpec(decoded.spec))).spec) === JSON.stringify(decoded.spec)
        ? undefined
        : "the spec does not survive re-encoding",
    seeds: [info(encodeChainSpec(chainSpec("test"))), info(encodeChainSpec(chainSpec("full", 9)))],
    protobuf: true
  })
  expect(report.accepted).toBeGreaterThan(0)
}, 300_000)
