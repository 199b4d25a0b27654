/**
 * Round messages an engine that is out of the group (self-quit, waiting for its host's catch-up) received,
 * replayed when the host joins it: the group's round-1 messages of the instance a rejoining engine enters
 * were usually sent before the catch-up arrived, and without them the joiner could not take part in that
 * instance and would fall behind again.
 *
 * Only an engine that is out records anything. A participating engine has handled each message already, and
 * a ring of the last messages kept every one alive long enough to survive two scavenges: under load V8
 * promoted them into the engine thread's old space and ran full GCs there.
 */
import type { ProcessId, RoundMsg } from "./core/index.js"

/** More than one instance of round messages of the largest group (2 rounds x 8 peers), and a bound. */
export const JOIN_REPLAY_LIMIT = 64

export interface ReceivedRound {
  readonly from: ProcessId
  readonly msg: RoundMsg
}

export class JoinReplay {
  private readonly received: Array<ReceivedRound> = []

  constructor(private readonly limit = JOIN_REPLAY_LIMIT) {}

  /** After a message was handled: kept while the engine is out, everything dropped once it takes part. */
  record(message: ReceivedRound, takingPart: boolean): void {
    if (takingPart) {
      if (this.received.length > 0) this.received.length = 0
      return
    }
    this.received.push(message)
    if (this.received.length > this.limit) this.received.shift()
  }

  /** The messages of instance `fromInstance` on, oldest first; nothing is kept after. */
  takeFrom(fromInstance: number): ReadonlyArray<ReceivedRound> {
    const taken = this.received.splice(0)
    return taken.filter((r) => r.msg.instance >= fromInstance)
  }

  get size(): number {
    return this.received.length
  }
}
