/**
 * The membership view as a pure state machine: heartbeats and clock ticks in, the new view and the
 * membership events out. No clock of its own: the shell passes `nowMs` with every input.
 *
 *   unknown/suspected/left --heartbeat--> joined
 *   joined --no heartbeat for suspectAfterMs--> suspected
 *   suspected --no heartbeat for leftAfterMs--> left
 *   any --heartbeat with leaving=true--> left
 * A heartbeat with a new incarnation while joined is a restart: the member is announced as joined again.
 */
import { type Heartbeat, type Member, MemberState, type MembershipEvent } from "@reef/proto"

export interface MembershipConfig {
  /** Silence after which a member is suspected: the failure-detection bound (plus one tick). */
  readonly suspectAfterMs: number
  /** Silence after which a suspected member is declared left. */
  readonly leftAfterMs: number
  /** How long a left member stays listed before it is forgotten (bounds memory). */
  readonly forgetAfterMs: number
}

export type MembershipView = ReadonlyMap<string, Member>

export type MembershipInput =
  | { readonly _tag: "Heartbeat"; readonly heartbeat: Heartbeat; readonly nowMs: number }
  | { readonly _tag: "Tick"; readonly nowMs: number }

export interface MembershipStep {
  readonly view: MembershipView
  readonly events: ReadonlyArray<MembershipEvent>
}

export const memberKey = (h: Heartbeat): string => `${h.address?.role}/${h.address?.id}`

const event = (member: Member, previous: MemberState): MembershipEvent => ({ member, previous })

export const emptyView: MembershipView = new Map()

const onHeartbeat = (view: MembershipView, heartbeat: Heartbeat, nowMs: number): MembershipStep => {
  if (heartbeat.address === undefined) return { view, events: [] }
  const key = memberKey(heartbeat)
  const known = view.get(key)
  const state = heartbeat.leaving ? MemberState.MEMBER_STATE_LEFT : MemberState.MEMBER_STATE_JOINED
  const member: Member = { address: heartbeat.address, state, lastHeartbeat: heartbeat, lastSeenMs: nowMs }
  const next = new Map(view).set(key, member)
  const previous = known?.state ?? MemberState.MEMBER_STATE_UNSPECIFIED
  const restarted = known !== undefined && known.lastHeartbeat?.incarnation !== heartbeat.incarnation
  const statusChanged = known !== undefined && known.lastHeartbeat?.status !== heartbeat.status
  if (previous === MemberState.MEMBER_STATE_LEFT && state === MemberState.MEMBER_STATE_LEFT) return { view, events: [] }
  const announce = previous !== state || (state === MemberState.MEMBER_STATE_JOINED && (restarted || statusChanged))
  return { view: next, events: announce ? [event(member, previous)] : [] }
}

const onTick = (view: MembershipView, config: MembershipConfig, nowMs: number): MembershipStep => {
  const events: Array<MembershipEvent> = []
  let next: Map<string, Member> | undefined
  for (const [key, member] of view) {
    const silentMs = nowMs - member.lastSeenMs
    let state = member.state
    if (state === MemberState.MEMBER_STATE_JOINED && silentMs > config.suspectAfterMs) {
      state = MemberState.MEMBER_STATE_SUSPECTED
    }
    if (state === MemberState.MEMBER_STATE_SUSPECTED && silentMs > config.leftAfterMs) {
      state = MemberState.MEMBER_STATE_LEFT
    }
    if (member.state === MemberState.MEMBER_STATE_LEFT && silentMs > config.forgetAfterMs) {
      next ??= new Map(view)
      next.delete(key)
      continue
    }
    if (state !== member.state) {
      next ??= new Map(view)
      const changed = { ...member, state }
      next.set(key, changed)
      events.push(event(changed, member.state))
    }
  }
  return { view: next ?? view, events }
}

export const stepMembership = (
  view: MembershipView,
  config: MembershipConfig,
  input: MembershipInput
): MembershipStep =>
  input._tag === "Heartbeat" ? onHeartbeat(view, input.heartbeat, input.nowMs) : onTick(view, config, input.nowMs)
