/**
 * The YCSB workloads of the AirDB evaluation (§5.2): 1 KB values, uniform keys, and five mixes. Every system
 * runs the same mix: AirDB and SLSMR through load-process.ts, etcd through bench/go/etcdload (`-op ycsb`).
 */
export const WORKLOADS = ["insert-only", "update-heavy", "read-heavy", "read-only", "rmw"] as const
export type Workload = (typeof WORKLOADS)[number]

export interface Mix {
  readonly read: number
  readonly update: number
  readonly insert: number
  readonly rmw: number
}

export const MIXES: Readonly<Record<Workload, Mix>> = {
  "insert-only": { read: 0, update: 0, insert: 1, rmw: 0 },
  "update-heavy": { read: 0.5, update: 0.5, insert: 0, rmw: 0 },
  "read-heavy": { read: 0.95, update: 0.05, insert: 0, rmw: 0 },
  "read-only": { read: 1, update: 0, insert: 0, rmw: 0 },
  rmw: { read: 0.5, update: 0, insert: 0, rmw: 0.5 }
}

export type OpKind = keyof Mix

/** The operation for a uniform draw `x` in [0, 1). */
export const opFor = (mix: Mix, x: number): OpKind =>
  x < mix.read
    ? "read"
    : x < mix.read + mix.update
      ? "update"
      : x < mix.read + mix.update + mix.insert
        ? "insert"
        : "rmw"

/** YCSB-style key names; etcdload uses the same (`key-%08d`), so a loaded store serves both. */
export const keyName = (i: number): string => `key-${String(i).padStart(8, "0")}`

export const VALUE_BYTES = 1024
