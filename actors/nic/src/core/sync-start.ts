/**
 * sync-start (the paper's Alg. 3): moves a group from the asynchronous world into synchronous rounds by having
 * one leader, min(Π), broadcast a start signal, so every correct process starts the first instance within
 * ΔW = 2ΔI of the others. Needs a perfect failure detector P, but only here and only until the start: "P is
 * needed exclusively for this primitive, whose use is limited to the first phase of the tob algorithm".
 *
 *   sync-start:                 if p = leader and not started: send(start) to all; started ← true
 *                               else send(start-request) to leader
 *   upon recv(start-request):   send(start) to all; started ← true
 *   upon recv(start):           start
 *   upon failure_P(q), not started: Π ← Π \ {q}; leader ← min(Π); sync-start
 *
 * Deviations, both for bounded traffic: a leader that already sent start answers a later request to the
 * requester only; a process that already began does not re-request after a leader failure, but if it becomes
 * the leader it (re)sends start to all, since the old leader may have crashed halfway through its sends.
 */
import type { ProcessId, Step } from "./types.js"
import { sortIds } from "./value.js"

export type SyncStartMsg = { readonly _tag: "StartRequest" } | { readonly _tag: "Start" }

export interface SyncStartState {
  readonly self: ProcessId
  /** Π as this process sees it: members not reported failed by P, sorted so the leader is the first. */
  readonly alive: ReadonlyArray<ProcessId>
  /** Alg. 3's `started`: this process, as leader, sent start to all. */
  readonly leaderSent: boolean
  /** This process called sync-start at least once. */
  readonly triggered: boolean
  /** This process started the first instance. */
  readonly begun: boolean
}

export type SyncStartInput =
  | { readonly _tag: "Trigger" }
  | { readonly _tag: "Receive"; readonly from: ProcessId; readonly msg: SyncStartMsg }
  | { readonly _tag: "Failure"; readonly process: ProcessId }
  /** The first instance started by other means (a round message arrived first, or a rejoin). */
  | { readonly _tag: "MarkBegun" }

export type SyncStartOutput =
  | { readonly _tag: "Send"; readonly to: ReadonlyArray<ProcessId>; readonly msg: SyncStartMsg }
  | { readonly _tag: "Begin" }

export type SyncStartStep = Step<SyncStartState, SyncStartOutput>

export const createSyncStart = (self: ProcessId, members: ReadonlyArray<ProcessId>): SyncStartState => ({
  self,
  alive: sortIds(members),
  leaderSent: false,
  triggered: false,
  begun: false
})

export const leaderOf = (s: SyncStartState): ProcessId => s.alive[0]!

const begin = (s: SyncStartState): SyncStartStep =>
  s.begun ? { state: s, out: [] } : { state: { ...s, begun: true }, out: [{ _tag: "Begin" }] }

/** The leader's broadcast of start, to every other alive process, and its own start. */
const broadcastStart = (s: SyncStartState): SyncStartStep => {
  const to = s.alive.filter((p) => p !== s.self)
  const begun = begin({ ...s, leaderSent: true })
  const send: SyncStartOutput = { _tag: "Send", to, msg: { _tag: "Start" } }
  return { state: begun.state, out: to.length > 0 ? [send, ...begun.out] : begun.out }
}

const syncStart = (s: SyncStartState): SyncStartStep => {
  const state = { ...s, triggered: true }
  if (leaderOf(state) === state.self) return state.leaderSent ? { state, out: [] } : broadcastStart(state)
  if (state.begun) return { state, out: [] }
  return { state, out: [{ _tag: "Send", to: [leaderOf(state)], msg: { _tag: "StartRequest" } }] }
}

export const stepSyncStart = (s: SyncStartState, input: SyncStartInput): SyncStartStep => {
  switch (input._tag) {
    case "Trigger":
      return syncStart(s)
    case "MarkBegun":
      return { state: { ...s, begun: true }, out: [] }
    case "Receive":
      if (input.msg._tag === "Start") return begin(s)
      if (!s.leaderSent) return broadcastStart(s)
      return { state: s, out: [{ _tag: "Send", to: [input.from], msg: { _tag: "Start" } }] }
    case "Failure": {
      if (s.leaderSent || !s.alive.includes(input.process) || input.process === s.self) return { state: s, out: [] }
      const state = { ...s, alive: s.alive.filter((p) => p !== input.process) }
      const leads = leaderOf(state) === state.self
      return state.triggered || (leads && state.begun) ? syncStart(state) : { state, out: [] }
    }
  }
}
