/**
 * Committed transactions not completed yet, by seq. Seqs are dispatched consecutively and complete in any
 * order, so they live in a ring of typed arrays over [watermark, next): no map entry or object per transaction
 * on the dispatch path. `watermark` is the lowest seq not completed (every seq below it has completed).
 */
export interface InflightEntry {
  readonly txId: string
  readonly worker: number
  readonly weight: number
  readonly height: number
}

export class InflightWindow {
  private txIds: Array<string | undefined> = new Array(1024)
  private workers = new Int32Array(1024)
  private weights = new Float64Array(1024)
  private heights = new Float64Array(1024)
  private mask = 1023
  /** Lowest seq not completed. */
  watermark = 1
  /** Next seq to dispatch. */
  next = 1
  size = 0

  add(seq: number, txId: string, worker: number, weight: number, height: number): void {
    if (seq !== this.next) throw new Error(`inflight: seq ${seq} dispatched out of order (next is ${this.next})`)
    if (this.next - this.watermark >= this.mask) this.grow()
    const i = seq & this.mask
    this.txIds[i] = txId
    this.workers[i] = worker
    this.weights[i] = weight
    this.heights[i] = height
    this.next++
    this.size++
  }

  /** The owner code `seq` was dispatched to, or -1 when it is not in flight. */
  workerOf(seq: number): number {
    if (seq < this.watermark || seq >= this.next) return -1
    const i = seq & this.mask
    return this.txIds[i] === undefined ? -1 : this.workers[i]!
  }

  /** The seqs in flight at owner code `worker`, lowest first. */
  seqsOf(worker: number): Array<number> {
    const seqs: Array<number> = []
    for (let seq = this.watermark; seq < this.next; seq++) {
      const i = seq & this.mask
      if (this.txIds[i] !== undefined && this.workers[i] === worker) seqs.push(seq)
    }
    return seqs
  }

  /** Takes `seq` out of the window; undefined when it is not in flight (a duplicate or unknown completion). */
  complete(seq: number): InflightEntry | undefined {
    if (seq < this.watermark || seq >= this.next) return undefined
    const i = seq & this.mask
    const txId = this.txIds[i]
    if (txId === undefined) return undefined
    this.txIds[i] = undefined
    this.size--
    const entry = { txId, worker: this.workers[i]!, weight: this.weights[i]!, height: this.heights[i]! }
    while (this.watermark < this.next && this.txIds[this.watermark & this.mask] === undefined) this.watermark++
    return entry
  }

  /** Forgets everything in flight: the next seq dispatched is `next` (a recovery replays from there). */
  reset(next: number): void {
    this.txIds = new Array(1024)
    this.workers = new Int32Array(1024)
    this.weights = new Float64Array(1024)
    this.heights = new Float64Array(1024)
    this.mask = 1023
    this.watermark = next
    this.next = next
    this.size = 0
  }

  private grow(): void {
    const capacity = (this.mask + 1) * 2
    const txIds: Array<string | undefined> = new Array(capacity)
    const workers = new Int32Array(capacity)
    const weights = new Float64Array(capacity)
    const heights = new Float64Array(capacity)
    for (let seq = this.watermark; seq < this.next; seq++) {
      const from = seq & this.mask
      const to = seq & (capacity - 1)
      txIds[to] = this.txIds[from]
      workers[to] = this.workers[from]!
      weights[to] = this.weights[from]!
      heights[to] = this.heights[from]!
    }
    this.txIds = txIds
    this.workers = workers
    this.weights = weights
    this.heights = heights
    this.mask = capacity - 1
  }
}
