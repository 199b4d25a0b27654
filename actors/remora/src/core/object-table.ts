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
 * Keys are interned once (KeyIndex: a key's id is its position of first appearance), and both values live
 * packed in one float64 per id, `version * OWNER_CODES + owner`: planning a block then touches arrays only, not
 * a hash map per access (the Rust implementation likewise indexes objects by number). Worker owner codes come
 * from a WorkerRegistry.
 */
import type { Key, WorkerId } from "./types.js"

/** Owner code of the coordinator. A worker's code is its registry index + 1. */
export const COORDINATOR_OWNER = 0
/** Owner codes per packed entry: at most OWNER_CODES - 1 workers over a coordinator's life. */
export const OWNER_CODES = 4096

export const pack = (version: number, owner: number): number => version * OWNER_CODES + owner
export const versionOf = (packed: number): number => Math.floor(packed / OWNER_CODES)
export const ownerOf = (packed: number): number => packed % OWNER_CODES

/** Key ids: dense integers in order of first appearance. */
export class KeyIndex {
  private readonly ids = new Map<Key, number>()
  private readonly names: Array<Key> = []

  /** The id of `key`, assigned now if it has none. */
  intern(key: Key): number {
    let id = this.ids.get(key)
    if (id === undefined) {
      id = this.names.length
      this.ids.set(key, id)
      this.names.push(key)
    }
    return id
  }

  /** The id of `key`, or -1 when it was never interned. */
  find(key: Key): number {
    return this.ids.get(key) ?? -1
  }

  name(id: number): Key {
    return this.names[id]!
  }

  get size(): number {
    return this.names.length
  }
}

/** Readable metadata by key id: the router's table, or the scheduler's copy on top of it. */
export interface MetadataReader {
  /** Packed (version, owner) of key `id`; 0 (version 0, the coordinator) for a key never assigned. */
  get(id: number): number
}

export interface MetadataWriter extends MetadataReader {
  set(id: number, packed: number): void
}

const grownFloat64 = (a: Float64Array<ArrayBuffer>, id: number): Float64Array<ArrayBuffer> => {
  if (id < a.length) return a
  const b = new Float64Array(Math.max(id + 1, a.length * 2))
  b.set(a)
  return b
}

const grownUint32 = (a: Uint32Array<ArrayBuffer>, id: number): Uint32Array<ArrayBuffer> => {
  if (id < a.length) return a
  const b = new Uint32Array(Math.max(id + 1, a.length * 2))
  b.set(a)
  return b
}

/** The router's copy: authoritative, updated on dispatch (App. A.7, "atomically updating owner[k]"). */
export class ObjectTable implements MetadataWriter {
  private packed = new Float64Array(1024)
  private count = 0

  get(id: number): number {
    return id < this.packed.length ? this.packed[id]! : 0
  }

  set(id: number, packed: number): void {
    this.packed = grownFloat64(this.packed, id)
    if (this.packed[id] === 0 && packed !== 0) this.count++
    this.packed[id] = packed
  }

  /** Every key back to version 0 at the coordinator (a recovery then sets the persisted versions). */
  clear(): void {
    this.packed.fill(0)
    this.count = 0
  }

  /** Keys whose owner is `code` (a scan: for rare events such as a worker's restart). */
  ownedBy(code: number): number {
    let n = 0
    for (let id = 0; id < this.packed.length; id++) if (this.packed[id] !== 0 && ownerOf(this.packed[id]!) === code) n++
    return n
  }

  /** Keys ever assigned a version. */
  get size(): number {
    return this.count
  }
}

/**
 * The scheduler's copy: the router's table plus the changes planned for proposals still in consensus. It is
 * only ever ahead of the router by those plans; `resync` drops them (§4.4: "the scheduler pauses, synchronizes
 * the two metadata versions, discards intermediate schedules, and then resumes"), in O(1): an entry counts only
 * if it was written in the current epoch.
 */
export class SchedulerView implements MetadataWriter {
  private planned = new Float64Array(1024)
  private stamps = new Uint32Array(1024)
  private epoch = 1

  constructor(private readonly router: MetadataReader) {}

  get(id: number): number {
    return id < this.stamps.length && this.stamps[id] === this.epoch ? this.planned[id]! : this.router.get(id)
  }

  set(id: number, packed: number): void {
    this.planned = grownFloat64(this.planned, id)
    this.stamps = grownUint32(this.stamps, id)
    this.planned[id] = packed
    this.stamps[id] = this.epoch
  }

  resync(): void {
    this.epoch++
  }
}

/**
 * Workers by owner code. A code names one incarnation of a worker (one process start): a worker restarted with
 * the same id is a new incarnation and gets a new code, so nothing its previous life owned or was sent is ever
 * taken for the new one's. Codes are never reused, so a packed owner never names a different incarnation later.
 */
export class WorkerRegistry {
  private readonly ids: Array<WorkerId> = []
  private readonly incarnations: Array<string> = []
  private readonly codes = new Map<string, number>()
  /** The newest incarnation's code of each worker id. */
  private readonly newest = new Map<WorkerId, number>()

  /** The code of (worker, incarnation), assigned now if it has none; it becomes the worker's newest. */
  codeOf(worker: WorkerId, incarnation = ""): number {
    const name = `${worker}\u0000${incarnation}`
    let code = this.codes.get(name)
    if (code === undefined) {
      if (this.ids.length + 1 >= OWNER_CODES) throw new Error(`more than ${OWNER_CODES - 1} worker incarnations`)
      this.ids.push(worker)
      this.incarnations.push(incarnation)
      code = this.ids.length
      this.codes.set(name, code)
      this.newest.set(worker, code)
    }
    return code
  }

  /** The code of (worker, incarnation), or undefined when it never had one. */
  find(worker: WorkerId, incarnation: string): number | undefined {
    return this.codes.get(`${worker}\u0000${incarnation}`)
  }

  /** The code of the worker's newest incarnation, or undefined when it has none. */
  newestOf(worker: WorkerId): number | undefined {
    return this.newest.get(worker)
  }

  /** An older incarnation of a worker that has restarted since. */
  isRetired(code: number): boolean {
    return code > 0 && this.newest.get(this.idOf(code)) !== code
  }

  idOf(code: number): WorkerId {
    const id = this.ids[code - 1]
    if (id === undefined) throw new Error(`no worker with owner code ${code}`)
    return id
  }

  incarnationOf(code: number): string {
    return this.incarnations[code - 1] ?? ""
  }

  /** Highest code handed out (array sizes). */
  get maxCode(): number {
    return this.ids.length
  }
}
