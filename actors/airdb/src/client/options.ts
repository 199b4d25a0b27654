/** How an AirDB client is configured, and the store parameters a client creating a store writes down. */
import type { MergePolicy } from "../core/chain.js"
import { DEFAULT_MERGE_POLICY } from "../core/chain.js"
import type { StoreConfig } from "../core/coordination.js"
import type { Isolation } from "../core/types.js"

export const FORMAT_VERSION = 1

/** Parameters of a new store (ignored when the store exists: its own are used). */
export const DEFAULT_STORE_CONFIG: StoreConfig = {
  formatVersion: FORMAT_VERSION,
  conflictWindow: 256,
  timely: { snapshotEvery: 128, epsilon: 0.25 },
  // A begin-snapshot of a client that died holds its range this long (on each client's clock): writers may
  // wait that long at the timely bound, so it is short; a slow creator is merely duplicated.
  snapshotTtlMs: 2_000,
  layout: { commandSegmentRecords: 100_000, stateSegmentRecords: 4096, metaSegmentRecords: 4096 }
}

export interface AirDbOptions {
  /** The store's name: its segments are named `<store>-...`. */
  readonly store: string
  /** SS (default) or SI for this client's transactions. */
  readonly isolation?: Isolation
  /** Parameters if this client creates the store. */
  readonly create?: Partial<Omit<StoreConfig, "formatVersion">>
  /** This incarnation's id (default: random). A restarted process is a new incarnation. */
  readonly clientId?: string
  /** Least time between two tail checks of the bus stand (§4.4: "e.g., 10ms"). */
  readonly minSyncGapMs?: number
  /** Bytes of snapshot blocks this client caches. */
  readonly cacheBytes?: number
  /** Target size of a snapshot block. */
  readonly blockBytes?: number
  /** Most intentions in one command entry. */
  readonly maxBatchIntentions?: number
  readonly maxKeyBytes?: number
  readonly maxValueBytes?: number
  /** Attempts of a transaction that aborts on conflicts. */
  readonly maxAttempts?: number
  readonly mergePolicy?: MergePolicy
  /** How long a merged-away snapshot segment is kept for readers of the old chain before it is deleted. */
  readonly gcGraceMs?: number
  /** Load every snapshot block at open and keep them all (the SLSMR baseline's full materialisation). */
  readonly eager?: boolean
  /** Take part in snapshot creation (default true; a client that never snapshots still waits on the invariant). */
  readonly snapshots?: boolean
}

export interface ResolvedOptions {
  readonly store: string
  readonly isolation: Isolation
  readonly create: StoreConfig
  readonly clientId: string
  readonly minSyncGapMs: number
  readonly cacheBytes: number
  readonly blockBytes: number
  readonly maxBatchIntentions: number
  readonly maxKeyBytes: number
  readonly maxValueBytes: number
  readonly maxAttempts: number
  readonly mergePolicy: MergePolicy
  readonly gcGraceMs: number
  readonly eager: boolean
  readonly snapshots: boolean
}

const STORE_NAME = /^[A-Za-z0-9_]{1,40}$/

export const resolveOptions = (o: AirDbOptions, randomId: () => string): ResolvedOptions => {
  if (!STORE_NAME.test(o.store))
    throw new Error(`store name must be 1-40 of [A-Za-z0-9_], got ${JSON.stringify(o.store)}`)
  const create: StoreConfig = {
    ...DEFAULT_STORE_CONFIG,
    ...o.create,
    formatVersion: FORMAT_VERSION,
    timely: { ...DEFAULT_STORE_CONFIG.timely, ...o.create?.timely },
    layout: { ...DEFAULT_STORE_CONFIG.layout, ...o.create?.layout }
  }
  return {
    store: o.store,
    isolation: o.isolation ?? "serializable",
    create,
    clientId: o.clientId ?? randomId(),
    minSyncGapMs: o.minSyncGapMs ?? 10,
    cacheBytes: o.eager === true ? Number.MAX_SAFE_INTEGER : (o.cacheBytes ?? 64 * 1024 * 1024),
    blockBytes: o.blockBytes ?? 64 * 1024,
    maxBatchIntentions: Math.min(o.maxBatchIntentions ?? 4096, 65_535),
    maxKeyBytes: o.maxKeyBytes ?? 1024,
    maxValueBytes: o.maxValueBytes ?? 256 * 1024,
    maxAttempts: o.maxAttempts ?? 16,
    mergePolicy: o.mergePolicy ?? DEFAULT_MERGE_POLICY,
    gcGraceMs: o.gcGraceMs ?? 60_000,
    eager: o.eager === true,
    snapshots: o.snapshots ?? true
  }
}
