/**
 * The workers the coordinator places work on, from membership events: every `worker` actor that joined and has
 * not left, each as its newest incarnation (the heartbeat's). A restart shows up as the same id with a new
 * incarnation, which the core treats as a new worker (never keyed on the id alone).
 */
import { MemberState, type MembershipEvent } from "@reef/proto"
import type { WorkerRef } from "@reef/remora"

export class WorkerSet {
  private readonly members = new Map<string, { state: MemberState; incarnation: string }>()

  /** Applies a membership event of a `worker` actor; the new active set when it changed, else undefined. */
  update(event: MembershipEvent): ReadonlyArray<WorkerRef> | undefined {
    const id = event.member?.address?.id
    if (id === undefined) return undefined
    const before = this.key()
    this.members.set(id, { state: event.member!.state, incarnation: event.member!.lastHeartbeat?.incarnation ?? "" })
    return this.key() === before ? undefined : this.active()
  }

  active(): ReadonlyArray<WorkerRef> {
    const refs: Array<WorkerRef> = []
    for (const [id, m] of this.members) {
      if (m.state !== MemberState.MEMBER_STATE_LEFT) refs.push({ id, incarnation: m.incarnation })
    }
    return refs.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  }

  private key(): string {
    return this.active()
      .map((w) => `${w.id}@${w.incarnation}`)
      .join(",")
  }
}
