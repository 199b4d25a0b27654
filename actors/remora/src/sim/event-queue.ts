/** The simulator's clock: events in time order, ties in insertion order (a binary heap). */
export class EventQueue<E> {
  private readonly heap: Array<{ readonly at: number; readonly n: number; readonly event: E }> = []
  private inserted = 0
  now = 0

  get size(): number {
    return this.heap.length
  }

  at(time: number, event: E): void {
    const item = { at: Math.max(time, this.now), n: this.inserted++, event }
    const h = this.heap
    h.push(item)
    let i = h.length - 1
    while (i > 0) {
      const p = (i - 1) >> 1
      if (!before(h[i]!, h[p]!)) break
      ;[h[i], h[p]] = [h[p]!, h[i]!]
      i = p
    }
  }

  after(delayMs: number, event: E): void {
    this.at(this.now + delayMs, event)
  }

  /** The next event, advancing `now` to its time. */
  pop(): E | undefined {
    const h = this.heap
    if (h.length === 0) return undefined
    const top = h[0]!
    const last = h.pop()!
    if (h.length > 0) {
      h[0] = last
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        const r = l + 1
        let m = i
        if (l < h.length && before(h[l]!, h[m]!)) m = l
        if (r < h.length && before(h[r]!, h[m]!)) m = r
        if (m === i) break
        ;[h[i], h[m]] = [h[m]!, h[i]!]
        i = m
      }
    }
    this.now = top.at
    return top.event
  }
}

const before = (a: { at: number; n: number }, b: { at: number; n: number }) =>
  a.at < b.at || (a.at === b.at && a.n < b.n)
