/** A FIFO queue with O(1) push and shift (an array with a moving head, compacted when half is dead). */
export class Deque<T> {
  private items: Array<T | undefined> = []
  private head = 0

  get length(): number {
    return this.items.length - this.head
  }

  push(item: T): void {
    this.items.push(item)
  }

  clear(): void {
    this.items = []
    this.head = 0
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined
    const item = this.items[this.head]
    this.items[this.head++] = undefined
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head)
      this.head = 0
    }
    return item
  }
}
