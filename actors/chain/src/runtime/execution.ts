/**
 * One block's execution state: what the block has read and written so far, a journal so a failing
 * transaction leaves no writes, and the hooks through which an access recorder (the primary's hint
 * builder) sees every key the first time the block touches it.
 *
 * The block reads its parent's state through a `PreState`: the store's two-step lookup on demand (the
 * baseline and the primary), a prefetched per-block cache (the hinted backup), or an in-memory model
 * (tests). The execution is the same whatever serves the reads: that is what makes hints advisory.
 */
import { createHash } from "node:crypto"
import { type Address, KEY_BYTES, type StorageKey, writeU64 } from "../state/keys.js"
import type { ReadSource, StorageChange } from "../state/store.js"
import { CONTRACT_NAMESPACE, type ContractInfo, decodeCode, deriveAddress, kindName } from "./layout.js"

/** The state a block executes on: its parent's. */
export interface PreState {
  /** The value of `key` as of the parent block; sets `lastSource` to where it was found. */
  storage(key: StorageKey): number
  /** Where the last `storage` read found its value (SOURCE_UNKNOWN: a cache in front of the store had it). */
  readonly lastSource: ReadSource
  /** The code at `address`, or undefined if no contract lives there. */
  code(address: Address): Uint8Array | undefined
}

/** Sees every storage key and contract a block touches, once each, at the first access (§4.1 Phase 1). */
export interface AccessRecorder {
  /** `value` is the key's value before the block, `source` where the read found it. */
  storage(key: StorageKey, source: ReadSource, value: number): void
  code(address: Address): void
}

/** Sees every storage access (calibration only: it costs a call per access). */
export type AccessObserver = (key: StorageKey) => void

/** A transaction failed (insufficient balance, no route, ...): its writes are rolled back, its reads stay. */
export class Revert {
  constructor(readonly reason: string) {}
}

/**
 * OpenZeppelin's ReentrancyGuard: a status slot read and set around the call (1 idle, 2 entered), a hot key
 * every call to the contract reads and writes twice.
 */
export const nonReentrant = <A>(x: BlockExecution, statusKey: StorageKey, body: () => A): A => {
  if (x.sload(statusKey) === 2) throw new Revert("reentrant call")
  x.sstore(statusKey, 2)
  const result = body()
  x.sstore(statusKey, 1)
  return result
}

/** Chain-wide constants a contract needs: the account id of a contract, and contract addresses. */
export class ChainContext {
  private readonly addresses: Array<Address | undefined> = []

  constructor(
    readonly seed: number,
    /** Users are accounts [0, users); contract c is account users + c. */
    readonly users: number
  ) {}

  address(index: number): Address {
    let address = this.addresses[index]
    if (address === undefined) {
      address = deriveAddress(this.seed, CONTRACT_NAMESPACE, index)
      this.addresses[index] = address
    }
    return address
  }

  account(contractIndex: number): number {
    return this.users + contractIndex
  }
}

export interface ExecutionCounters {
  storageOps: number
  callOps: number
  reverted: number
}

export class BlockExecution {
  /** Every key the block has touched, with its current value. */
  private readonly values = new Map<StorageKey, number>()
  /** The value each touched key had before the block. */
  private readonly originals = new Map<StorageKey, number>()
  private readonly contracts = new Map<number, ContractInfo>()
  /** Key, previous value pairs written by the running transaction (undone on Revert). */
  private journal: Array<StorageKey | number> = []
  readonly counters: ExecutionCounters = { storageOps: 0, callOps: 0, reverted: 0 }

  constructor(
    readonly number: number,
    readonly chain: ChainContext,
    private readonly pre: PreState,
    private readonly recorder?: AccessRecorder,
    private readonly observer?: AccessObserver
  ) {}

  sload(key: StorageKey): number {
    this.counters.storageOps++
    if (this.observer !== undefined) this.observer(key)
    const value = this.values.get(key)
    return value === undefined ? this.firstAccess(key) : value
  }

  sstore(key: StorageKey, value: number): void {
    this.counters.storageOps++
    if (this.observer !== undefined) this.observer(key)
    let previous = this.values.get(key)
    // As the EVM's SSTORE, a write loads the slot's original value first (for the change set).
    if (previous === undefined) previous = this.firstAccess(key)
    this.journal.push(key, previous)
    this.values.set(key, value)
  }

  /** CALL: loads the contract's code (once per block) and parses its header. */
  call(index: number): ContractInfo {
    this.counters.callOps++
    const cached = this.contracts.get(index)
    if (cached !== undefined) return cached
    const address = this.chain.address(index)
    this.recorder?.code(address)
    const code = this.pre.code(address)
    if (code === undefined) throw new Revert(`call to an account without code (contract ${index})`)
    const info = decodeCode(address, code)
    if (info.index !== index) throw new Revert(`code at contract ${index} claims index ${info.index}`)
    this.contracts.set(index, info)
    return info
  }

  /** A call that requires the callee to be of one of `kinds`. */
  callKind(index: number, ...kinds: ReadonlyArray<number>): ContractInfo {
    const info = this.call(index)
    if (!kinds.includes(info.kind)) throw new Revert(`contract ${index} is a ${kindName(info.kind)}`)
    return info
  }

  /** Runs one transaction; a Revert undoes its writes and reports false. */
  transaction(run: () => void): boolean {
    this.journal = []
    try {
      run()
      return true
    } catch (error) {
      if (!(error instanceof Revert)) throw error
      for (let i = this.journal.length - 2; i >= 0; i -= 2) {
        this.values.set(this.journal[i] as StorageKey, this.journal[i + 1] as number)
      }
      this.counters.reverted++
      return false
    } finally {
      this.journal = []
    }
  }

  get uniqueKeys(): number {
    return this.values.size
  }

  /** Every key the block touched, with its value at the end of the block. */
  get finalValues(): ReadonlyMap<StorageKey, number> {
    return this.values
  }

  /** Keys whose value the block changed, in key order (the change set, and what the state hash covers). */
  changes(): Array<StorageChange> {
    const changes: Array<StorageChange> = []
    for (const [key, after] of this.values) {
      const before = this.originals.get(key)!
      if (before !== after) changes.push({ key, before, after })
    }
    return changes.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  }

  private firstAccess(key: StorageKey): number {
    const value = this.pre.storage(key)
    this.recorder?.storage(key, this.pre.lastSource, value)
    this.values.set(key, value)
    this.originals.set(key, value)
    return value
  }
}

/**
 * The state-change hash (§4.3): SHA-256 over the block number, every changed key with its new value in
 * key order, and each transaction's status. A backup that reaches the same hash made the same changes.
 */
export const stateChangeHash = (block: number, changes: ReadonlyArray<StorageChange>, statuses: Uint8Array): Buffer => {
  const bytes = Buffer.allocUnsafe(8 + 4 + changes.length * (KEY_BYTES + 8) + 4 + statuses.length)
  let offset = 0
  writeU64(bytes, offset, block)
  offset += 8
  bytes.writeUInt32BE(changes.length, offset)
  offset += 4
  for (const change of changes) {
    offset += bytes.write(change.key, offset, KEY_BYTES, "latin1")
    writeU64(bytes, offset, change.after)
    offset += 8
  }
  bytes.writeUInt32BE(statuses.length, offset)
  offset += 4
  bytes.set(statuses, offset)
  return createHash("sha256").update(bytes).digest()
}
