/**
 * A min-heap of timed items: by time, then by insertion order (so items due together come out in the order
 * they were scheduled, which keeps a seeded run deterministic). The simulators' agendas.
 */
export interface Timed {
  readonly at: number
}

export class TimedHeap<T extends Timed> {
  private readonly heap: Array<{ readonly item: T; readonly seq: number }> = []
  private seq = 0

  get size(): number {
    return this.heap.length
  }

  /** The earliest item, left in place. */
  peek(): T | undefined {
    return this.heap[0]?.item
  }

  push(item: T): void {
    const h = this.heap
    h.push({ item, seq: this.seq++ })
    for (let i = h.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1
      if (!this.less(i, parent)) break
      ;[h[i], h[parent]] = [h[parent]!, h[i]!]
      i = parent
    }
  }

  pop(): T | undefined {
    const h = this.heap
    const top = h[0]
    const last = h.pop()
    if (top === undefined || last === undefined || h.length === 0) return top?.item
    h[0] = last
    for (let i = 0; ; ) {
      const l = 2 * i + 1
      const r = l + 1
      let m = i
      if (l < h.length && this.less(l, m)) m = l
      if (r < h.length && this.less(r, m)) m = r
      if (m === i) break
      ;[h[i], h[m]] = [h[m]!, h[i]!]
      i = m
    }
    return top.item
  }

  private less(i: number, j: number): boolean {
    const a = this.heap[i]!
    const b = this.heap[j]!
    return a.item.at < b.item.at || (a.item.at === b.item.at && a.seq < b.seq)
  }
}
