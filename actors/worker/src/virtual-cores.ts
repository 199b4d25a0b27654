/**
 * The timers behind a worker's virtual cores: each running unit ends at a deadline (its synthetic cost after it
 * started); one `setTimeout` is armed for the earliest, and when it fires every unit due by then ends. `done` is
 * called once per unit, never re-entrantly inside `start` (units without cost never come here: the driver ends
 * them in the same turn).
 */
export class VirtualCoreTimers {
  private readonly heap: Array<{ readonly at: number; readonly unit: number; readonly valid: boolean }> = []
  private timer: ReturnType<typeof setTimeout> | undefined
  private armedAt = Number.POSITIVE_INFINITY
  private closed = false

  constructor(
    private readonly done: (unit: number, valid: boolean) => void,
    private readonly now: () => number = () => performance.now()
  ) {}

  /** Starts a unit of `costUs`; `valid` is carried to `done` (the stateless check's result). */
  start(unit: number, costUs: number, valid: boolean): void {
    const at = this.now() + costUs / 1000
    const h = this.heap
    h.push({ at, unit, valid })
    let i = h.length - 1
    while (i > 0) {
      const p = (i - 1) >> 1
      if (h[p]!.at <= h[i]!.at) break
      ;[h[i], h[p]] = [h[p]!, h[i]!]
      i = p
    }
    this.arm()
  }

  get running(): number {
    return this.heap.length
  }

  close(): void {
    this.closed = true
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
  }

  private arm(): void {
    if (this.closed || this.heap.length === 0) return
    const next = this.heap[0]!.at
    if (this.timer !== undefined && this.armedAt <= next) return
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.armedAt = next
    this.timer = setTimeout(this.fire, Math.max(0, next - this.now()))
  }

  private readonly fire = (): void => {
    this.timer = undefined
    this.armedAt = Number.POSITIVE_INFINITY
    // setTimeout may fire a little early; anything due within 50 µs ends now.
    const now = this.now() + 0.05
    const due: Array<{ unit: number; valid: boolean }> = []
    while (this.heap.length > 0 && this.heap[0]!.at <= now) due.push(this.pop())
    for (const d of due) this.done(d.unit, d.valid)
    this.arm()
  }

  private pop(): { readonly at: number; readonly unit: number; readonly valid: boolean } {
    const h = this.heap
    const top = h[0]!
    const last = h.pop()!
    if (h.length > 0) {
      h[0] = last
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        const r = l + 1
        let m = i
        if (l < h.length && h[l]!.at < h[m]!.at) m = l
        if (r < h.length && h[r]!.at < h[m]!.at) m = r
        if (m === i) break
        ;[h[i], h[m]] = [h[m]!, h[i]!]
        i = m
      }
    }
    return top
  }
}
