/**
 * Batching per turn of the event loop: what is added during one turn leaves as one batch when the turn ends,
 * or earlier once the batch reaches its bound. Hot paths pay per message, not per item (a proposal, a NATS
 * publish, a `postMessage`, a gRPC frame), so a burst from one turn costs one message.
 *
 * The bound is on a size the caller defines (bytes, usually): a batch never goes over `maxSize` unless a
 * single item does, because an item that would overflow the batch flushes it first. `maxItems` bounds the
 * count the same way.
 *
 * `"immediate"` (setImmediate) flushes after the I/O callbacks of this turn, so everything read from the
 * sockets in one poll joins the batch; `"microtask"` flushes before the loop continues (inside a worker that
 * must answer within the current callback).
 */

export interface TurnBatcherOptions<T> {
  /** Receives each batch, in the order items were added; the array is the receiver's to keep. */
  readonly flush: (items: Array<T>) => void
  /** What an item counts toward `maxSize` (e.g. its encoded bytes). Without it, items count 0. */
  readonly sizeOf?: (item: T) => number
  /** A batch is sent as soon as it holds this much (see the module comment). Default: no bound. */
  readonly maxSize?: number
  /** A batch is sent as soon as it holds this many items. Default: no bound. */
  readonly maxItems?: number
  /** When a turn's batch leaves: after this turn's I/O (`immediate`, the default) or as a microtask. */
  readonly schedule?: "immediate" | "microtask"
}

export class TurnBatcher<T> {
  private items: Array<T> = []
  private size = 0
  private scheduled = false
  private readonly flushScheduled = () => {
    this.scheduled = false
    this.flush()
  }

  constructor(private readonly options: TurnBatcherOptions<T>) {
    if (options.maxSize !== undefined && !(options.maxSize > 0)) throw new RangeError("maxSize must be > 0")
    if (options.maxItems !== undefined && !(options.maxItems >= 1)) throw new RangeError("maxItems must be >= 1")
  }

  /** Items waiting for the end of this turn. */
  get pending(): number {
    return this.items.length
  }

  /** Their total size (sizeOf). */
  get pendingSize(): number {
    return this.size
  }

  /** Adds an item to this turn's batch, sending the batch first if the item would take it over `maxSize`. */
  add(item: T): void {
    const itemSize = this.options.sizeOf?.(item) ?? 0
    const { maxSize, maxItems } = this.options
    if (maxSize !== undefined && this.items.length > 0 && this.size + itemSize > maxSize) this.flush()
    this.items.push(item)
    this.size += itemSize
    if ((maxSize !== undefined && this.size >= maxSize) || (maxItems !== undefined && this.items.length >= maxItems)) {
      this.flush()
    } else if (!this.scheduled) {
      this.scheduled = true
      if (this.options.schedule === "microtask") queueMicrotask(this.flushScheduled)
      else setImmediate(this.flushScheduled)
    }
  }

  /** Sends what is waiting now (e.g. before closing the stream it goes to). Nothing waiting: nothing sent. */
  flush(): void {
    if (this.items.length === 0) return
    const items = this.items
    this.items = []
    this.size = 0
    this.options.flush(items)
  }

  /** Drops what is waiting and returns it (e.g. to fail it when its destination broke). */
  clear(): Array<T> {
    const items = this.items
    this.items = []
    this.size = 0
    return items
  }
}
