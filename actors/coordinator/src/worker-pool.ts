/**
 * Which of the present workers are in the pool (§4.7). Without autoscaling every present worker is active. With
 * it, the pool is `min..max` of them and the rest are spares: running, idle processes (the paper's pre-launched
 * pool) that a scale-out activates. A retired incarnation is never active again; a new process of its id is a
 * spare. No I/O: the driver feeds it membership and the autoscaler's decisions.
 */
import type { WorkerRef } from "@reef/remora"

export type PoolState = "active" | "retiring" | "spare"

export interface PoolMemberView {
  readonly worker: string
  readonly incarnation: string
  readonly state: PoolState
}

export class WorkerPool {
  private present: ReadonlyArray<WorkerRef> = []
  /** Ids in the pool: they keep their slot across a restart (a new incarnation the core recovers). */
  private readonly activeIds = new Set<string>()
  /** Incarnations retired (decommissioned): never placed on again. */
  private readonly retired = new Set<string>()

  /** `min`: undefined without autoscaling (every present worker is active). */
  constructor(private readonly min: number | undefined) {}

  get elastic(): boolean {
    return this.min !== undefined
  }

  /**
   * The present workers changed (joined, restarted or left). An active id that left gives up its slot (a new
   * process of it comes back as a spare); spares fill the pool up to `min`.
   */
  setPresent(workers: ReadonlyArray<WorkerRef>): void {
    this.present = workers
    const ids = new Set(workers.map((w) => w.id))
    for (const id of this.activeIds) if (!ids.has(id)) this.activeIds.delete(id)
    while (this.min !== undefined && this.activeIds.size < this.min && this.activate() !== undefined) {}
  }

  /** Scale-out: the first spare (by id) joins the pool; undefined when there is none. */
  activate(): WorkerRef | undefined {
    const spare = this.spares()[0]
    if (spare !== undefined) this.activeIds.add(spare.id)
    return spare
  }

  /** The core retired this incarnation: it leaves the pool for good (a new incarnation of its id is a spare). */
  retire(worker: WorkerRef): void {
    this.retired.add(this.key(worker))
    if (this.present.some((w) => w.id === worker.id && w.incarnation === worker.incarnation)) {
      this.activeIds.delete(worker.id)
    }
  }

  /** The workers placements may go to (the core's Workers input). */
  active(): ReadonlyArray<WorkerRef> {
    if (!this.elastic) return this.present.filter((w) => !this.retired.has(this.key(w)))
    return this.present.filter((w) => this.activeIds.has(w.id) && !this.retired.has(this.key(w)))
  }

  spares(): ReadonlyArray<WorkerRef> {
    if (!this.elastic) return []
    return this.present.filter((w) => !this.activeIds.has(w.id) && !this.retired.has(this.key(w)))
  }

  /** Retired incarnations still present (their process has not stopped yet). */
  retiredPresent(): ReadonlyArray<WorkerRef> {
    return this.present.filter((w) => this.retired.has(this.key(w)))
  }

  /** Every present worker and its part; `retiring` lists the ids the core is draining. */
  view(retiring: ReadonlySet<string>): ReadonlyArray<PoolMemberView> {
    const spares = new Set(this.spares().map((w) => w.id))
    const out: Array<PoolMemberView> = []
    for (const w of this.present) {
      if (this.retired.has(this.key(w))) continue
      const state: PoolState = spares.has(w.id) ? "spare" : retiring.has(w.id) ? "retiring" : "active"
      out.push({ worker: w.id, incarnation: w.incarnation, state })
    }
    return out
  }

  private key(w: WorkerRef): string {
    return `${w.id}@${w.incarnation}`
  }
}
