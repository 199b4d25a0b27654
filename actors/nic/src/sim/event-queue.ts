/**
 * Simulated time: a min-heap of events ordered by (time, insertion order). The insertion order breaks ties, so
 * two events at the same microsecond always run in the same order and a seed replays exactly.
 */
interface Entry<E> {
  readonly atUs: number
  readonly order: number
  readonly event: E
}

export class EventQueue<E> {
  private readonly heap: Array<Entry<E>> = []
  private inserted = 0

  get size(): number {
    return this.heap.length
  }

  push(atUs: number, event: E): void {
    this.heap.push({ atUs, order: this.inserted++, event })
    this.up(this.heap.length - 1)
  }

  pop(): { readonly atUs: number; readonly event: E } | undefined {
    const top = this.heap[0]
    if (top === undefined) return undefined
    const last = this.heap.pop()!
    if (this.heap.length > 0) {
      this.heap[0] = last
      this.down(0)
    }
    return top
  }

  private less(a: number, b: number): boolean {
    const x = this.heap[a]!
    const y = this.heap[b]!
    return x.atUs < y.atUs || (x.atUs === y.atUs && x.order < y.order)
  }

  private swap(a: number, b: number): void {
    const tmp = this.heap[a]!
    this.heap[a] = this.heap[b]!
    this.heap[b] = tmp
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!this.less(i, parent)) return
      this.swap(i, parent)
      i = parent
    }
  }

  private down(i: number): void {
    for (;;) {
      const l = 2 * i + 1
      const r = l + 1
      let min = i
      if (l < this.heap.length && this.less(l, min)) min = l
      if (r < this.heap.length && this.less(r, min)) min = r
      if (min === i) return
      this.swap(i, min)
      i = min
    }
  }
}
