/**
 * Messages produced in one turn of the event loop, grouped by destination and sent once the turn ends: one
 * NATS message (a batched tell) per destination and message type instead of one per message.
 */
export class TurnOutbox<M> {
  private readonly pending = new Map<string, Array<M>>()
  private scheduled = false

  constructor(
    /** Sends one destination's messages of this turn (a batched tell). */
    private readonly send: (destination: string, messages: Array<M>) => void,
    /** Most messages in one batch; more go in further batches. */
    private readonly maxBatch = 2048
  ) {}

  push(destination: string, message: M): void {
    let list = this.pending.get(destination)
    if (list === undefined) {
      list = []
      this.pending.set(destination, list)
    }
    list.push(message)
    if (list.length >= this.maxBatch) {
      this.pending.delete(destination)
      this.send(destination, list)
    }
    if (!this.scheduled) {
      this.scheduled = true
      setImmediate(this.flush)
    }
  }

  readonly flush = (): void => {
    this.scheduled = false
    if (this.pending.size === 0) return
    const batches = [...this.pending]
    this.pending.clear()
    for (const [destination, messages] of batches) this.send(destination, messages)
  }
}
