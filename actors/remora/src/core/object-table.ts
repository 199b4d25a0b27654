/**
 * The coordinator's object metadata (§5: "a map from object names to a tuple of (current_version,
 * current_owner)"), and the scheduler's copy of it (§4.4).
 *
 * - `ver[k]`, the version the next access of k gets as its input (App. A.2, A.6): 0 until k is first assigned.
 *   A transaction whose input is (k, i) produces (k, i+1), reads included (§4.2: "a new version is created
 *   even for reads"), so per key the versions form one chain 0, 1, 2, ... (Lemma 4).
 * - `owner[k]` (App. A.7): the coordinator (code 0) until a transaction touching k is dispatched to a worker,
 *   then that worker: the worker that will hold k's newest version.
 *
 * Both live in one Map entry per key, packed as `version * OWNER_CODES + owner`, which halves the memory of two
 * maps (the table holds every key ever touched). Worker owner codes come from a WorkerRegistry.
 */
import type { Key, WorkerId } from "./types.js"

/** Owner code of the coordinator. A worker's code is its registry index + 1. */
export const COORDINATOR_OWNER = 0
/** Owner codes per packed entry: at most OWNER_CODES - 1 workers over a coordinator's life. */
export const OWNER_CODES = 4096

export const pack = (version: number, owner: number): number => version * OWNER_CODES + owner
export const versionOf = (packed: number): number => Math.floor(packed / OWNER_CODES)
export const ownerOf = (packed: number): number => packed % OWNER_CODES

/** Readable metadata: the router's table, or the scheduler's copy on top of it. */
export interface MetadataReader {
  /** Packed (version, owner) of `key`; 0 (version 0, the coordinator) for a key never assigned. */
  get(key: Key): number
}

export interface MetadataWriter extends MetadataReader {
  set(key: Key, packed: number): void
}

/** The router's copy: authoritative, updated on dispatch (App. A.7, "atomically updating owner[k]"). */
export class ObjectTable implements MetadataWriter {
  private readonly entries = new Map<Key, number>()

  get(key: Key): number {
    return this.entries.get(key) ?? 0
  }

  set(key: Key, packed: number): void {
    this.entries.set(key, packed)
  }

  /** Keys ever assigned a version. */
  get size(): number {
    return this.entries.size
  }

  keys(): IterableIterator<Key> {
    return this.entries.keys()
  }
}

/**
 * The scheduler's copy: the router's table plus the changes planned for proposals still in consensus. It is
 * only ever ahead of the router by those plans; `resync` drops them (§4.4: "the scheduler pauses, synchronizes
 * the two metadata versions, discards intermediate schedules, and then resumes").
 */
export class SchedulerView implements MetadataWriter {
  private readonly planned = new Map<Key, number>()

  constructor(private readonly router: MetadataReader) {}

  get(key: Key): number {
    const p = this.planned.get(key)
    return p === undefined ? this.router.get(key) : p
  }

  set(key: Key, packed: number): void {
    this.planned.set(key, packed)
  }

  resync(): void {
    this.planned.clear()
  }

  get plannedKeys(): number {
    return this.planned.size
  }
}

/** Worker ids by owner code. Codes are never reused, so a packed owner never names a different worker later. */
export class WorkerRegistry {
  private readonly ids: Array<WorkerId> = []
  private readonly codes = new Map<WorkerId, number>()

  codeOf(worker: WorkerId): number {
    let code = this.codes.get(worker)
    if (code === undefined) {
      if (this.ids.length + 1 >= OWNER_CODES) throw new Error(`more than ${OWNER_CODES - 1} workers`)
      this.ids.push(worker)
      code = this.ids.length
      this.codes.set(worker, code)
    }
    return code
  }

  idOf(code: number): WorkerId {
    const id = this.ids[code - 1]
    if (id === undefined) throw new Error(`no worker with owner code ${code}`)
    return id
  }

  /** Highest code handed out (array sizes). */
  get maxCode(): number {
    return this.ids.length
  }
}
