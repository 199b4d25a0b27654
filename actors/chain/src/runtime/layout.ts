/**
 * Where a contract keeps its storage, and what its code says about it.
 *
 * A contract's code (in the `code` table) starts with a header naming its kind, its slot seed and the sizes
 * of its storage regions; the runtime reads that header when the contract is called, so a transaction's
 * slots follow from state it reads, as in the EVM. Two kinds of slots:
 *
 * - dense slots: logical index i of a region populated at genesis is spread over the 256-bit slot space by
 *   a keyed permutation (like Solidity's hashed mappings: neighbours in the program are far apart on disk),
 *   but order-preservingly in the permuted index, so the genesis loader writes a contract's slots in key
 *   order without sorting tens of millions of keys;
 * - hashed slots: mapping entries outside the dense regions (new holders, new nodes, pair lookups), 32
 *   pseudo-random bytes from the mapping id and its arguments.
 */
import { StoreCorruptionError } from "../state/errors.js"
import { ADDRESS_BYTES, type Address, type Slot, type StorageKey } from "../state/keys.js"
import { mix32, Permutation, wordsToSlot } from "./mix.js"

export const ContractKind = {
  /** ERC-20 with its logic inline (USDT-like: a blacklist check on every transfer). */
  Token: 1,
  /** The logic of a proxied token: no storage of its own, runs on the proxy's (DELEGATECALL). */
  TokenLogic: 2,
  /** A token behind a proxy (USDC-like): every call reads the implementation slot and loads its code. */
  ProxyToken: 3,
  /** A constant-product AMM pair (Uniswap V2 style). */
  Pool: 4,
  /** The pool registry (factory): pair lookups and each token's routing hub. */
  Registry: 5,
  /** The swap router: reads the route from the registry, then swaps through one to three pools. */
  Router: 6,
  /** A mint whose items sit in sorted linked lists of slots; minting walks a list to its insertion point. */
  MintList: 7,
  /** A lending market (Compound cToken style). */
  Market: 8,
  /** The lending markets' risk checks. */
  Comptroller: 9,
  /** Asset prices, updated by keepers. */
  Oracle: 10
} as const
export type ContractKind = (typeof ContractKind)[keyof typeof ContractKind]

const KIND_NAMES: Readonly<Record<number, string>> = Object.fromEntries(
  Object.entries(ContractKind).map(([name, kind]) => [kind, name])
)
export const kindName = (kind: number): string => KIND_NAMES[kind] ?? `unknown(${kind})`

/** Logical indices below this are a contract's configuration slots. */
export const CONFIG_SLOTS = 16
export const MAX_PARAMS = 8

/** A contract as its code header describes it (parsed once per block per contract). */
export interface ContractInfo {
  readonly index: number
  readonly address: Address
  readonly kind: ContractKind
  readonly seed: number
  /** Size of the dense region: logical indices [0, dense) were populated at genesis. */
  readonly dense: number
  readonly params: ReadonlyArray<number>
  readonly permutation: Permutation
  /** Size of the code in bytes (what loading it reads). */
  readonly codeBytes: number
  /** Storage keys of the configuration slots, derived on first use (hot: read by most calls). */
  readonly configKeys: Array<StorageKey | undefined>
}

const CODE_MAGIC_0 = 0x52 // "R"
const CODE_MAGIC_1 = 0x43 // "C"
const CODE_VERSION = 1
const HEADER_BYTES = 16 + 4 * MAX_PARAMS

export interface ContractSpec {
  readonly index: number
  readonly kind: ContractKind
  readonly seed: number
  readonly dense: number
  readonly params: ReadonlyArray<number>
  /** Total code size; the bytes after the header are deterministic filler (bytecode stand-in). */
  readonly codeBytes: number
}

/** The code bytes of a contract: header, then filler up to its size. */
export const encodeCode = (spec: ContractSpec): Buffer => {
  if (spec.params.length > MAX_PARAMS) throw new RangeError(`at most ${MAX_PARAMS} params`)
  const code = Buffer.alloc(Math.max(HEADER_BYTES, spec.codeBytes))
  code[0] = CODE_MAGIC_0
  code[1] = CODE_MAGIC_1
  code[2] = CODE_VERSION
  code[3] = spec.kind
  code.writeUInt32BE(spec.index, 4)
  code.writeUInt32BE(spec.seed >>> 0, 8)
  code.writeUInt32BE(spec.dense, 12)
  for (let i = 0; i < spec.params.length; i++) code.writeUInt32BE(spec.params[i]!, 16 + 4 * i)
  for (let i = HEADER_BYTES; i < code.length; i += 4) {
    const word = mix32(spec.seed, i, 0xc0de)
    for (let j = 0; j < 4 && i + j < code.length; j++) code[i + j] = (word >>> (8 * j)) & 0xff
  }
  return code
}

/** Parses a code header (the runtime's CALL: an unknown or mangled code is corruption of the state). */
export const decodeCode = (address: Address, code: Uint8Array): ContractInfo => {
  if (code.length < HEADER_BYTES || code[0] !== CODE_MAGIC_0 || code[1] !== CODE_MAGIC_1) {
    throw new StoreCorruptionError({ what: "code", detail: `no contract header (${code.length} bytes)` })
  }
  if (code[2] !== CODE_VERSION) throw new StoreCorruptionError({ what: "code", detail: `version ${code[2]}` })
  const view = Buffer.from(code.buffer, code.byteOffset, code.length)
  const kind = code[3]! as ContractKind
  if (KIND_NAMES[kind] === undefined) throw new StoreCorruptionError({ what: "code", detail: `kind ${kind}` })
  const seed = view.readUInt32BE(8)
  const dense = view.readUInt32BE(12)
  const params: Array<number> = []
  for (let i = 0; i < MAX_PARAMS; i++) params.push(view.readUInt32BE(16 + 4 * i))
  return {
    index: view.readUInt32BE(4),
    address,
    kind,
    seed,
    dense,
    params,
    permutation: new Permutation(Math.max(1, dense), seed),
    codeBytes: code.length,
    configKeys: []
  }
}

const words = new Uint32Array(8)
const TWO_32 = 2 ** 32

/** The slot of position v of the permuted dense space: increasing in v (see the module comment). */
export const denseSlotAt = (seed: number, dense: number, v: number): Slot => {
  const x = (v / dense) * TWO_32
  const hi = Math.floor(x)
  words[0] = hi
  words[1] = Math.floor((x - hi) * TWO_32) >>> 0
  for (let i = 2; i < 8; i++) words[i] = mix32(seed, v, i)
  return wordsToSlot(words)
}

/** The slot of dense logical index `logical` (< info.dense). */
export const denseSlot = (info: ContractInfo, logical: number): Slot =>
  denseSlotAt(info.seed, info.dense, info.permutation.apply(logical))

/** The storage key of configuration slot `slot` (< CONFIG_SLOTS) of a contract. */
export const configKey = (info: ContractInfo, slot: number): StorageKey => {
  let key = info.configKeys[slot]
  if (key === undefined) {
    key = info.address + denseSlot(info, slot)
    info.configKeys[slot] = key
  }
  return key
}

/** The storage key of dense logical index `logical`. */
export const denseKey = (info: ContractInfo, logical: number): StorageKey => info.address + denseSlot(info, logical)

/** The storage key of a hashed mapping entry. */
export const hashedKey = (info: ContractInfo, mapping: number, a: number, b = 0): StorageKey =>
  info.address + hashedSlot(info.seed, mapping, a, b)

/** The slot of mapping entry `mapping[a][b]` outside the dense regions. */
export const hashedSlot = (seed: number, mapping: number, a: number, b = 0): Slot => {
  const base = mix32(seed, mapping, a, b)
  for (let i = 0; i < 8; i++) words[i] = mix32(base, i, a, mapping)
  return wordsToSlot(words)
}

/** 20 bytes from a chain seed, a namespace and an index. */
export const deriveAddress = (chainSeed: number, namespace: number, index: number): Address => {
  const bytes: Array<number> = []
  for (let i = 0; i < ADDRESS_BYTES / 4; i++) {
    const w = mix32(chainSeed, namespace, index, i)
    bytes.push(w >>> 24, (w >>> 16) & 0xff, (w >>> 8) & 0xff, w & 0xff)
  }
  return String.fromCharCode(...bytes)
}

export const CONTRACT_NAMESPACE = 0xc047
