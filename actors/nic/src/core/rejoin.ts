/**
 * Joining a replication group, as a pure step: what the host of an engine does from its process start until
 * it takes part, and again after each self-quit. Time comes in with the inputs (`nowMs`), the shell does the
 * I/O (asking peers, fetching a snapshot, commanding the engine) and feeds back what came of it.
 *
 * - Bootstrap: a process start asks every peer whether the group runs. A peer that has decided something
 *   answers with the instance to join at: the process joins as a rejoiner from the start (a restarted member
 *   never waits for a sync-start that happened long ago). When nobody has decided anything the group is new:
 *   it sync-starts, once every peer answers (bootstrap barrier: a peer still loading would take the first
 *   round-1 messages late and be suspected), or a majority after `allPeersMs`, or whoever answers after
 *   `majorityMs`.
 * - Peer choice: the most advanced answer among peers whose engine takes part, in the attempt that peer is in
 *   (popuc-multi.ts, "Attempts"), unless this process self-quit that very attempt: it never takes part in one
 *   attempt twice, so it waits for the group to decide that instance and joins after it. When no peer's
 *   engine takes part the group collapsed (every member self-quit): once *every* peer has answered, all join
 *   the most advanced instance in a new attempt, higher than any attempt anyone took part in; the lowest id
 *   among the askers opens it and the others follow its round-1 message, like sync-start for the first
 *   instance. Every peer, because a member that decided the instance and is merely slow to answer would
 *   otherwise see the group decide it again, differently (a majority is not enough: a decision in the last
 *   round needs no locked majority, App. A).
 * - A self-quit: the engine often catches up by itself as a learner within an instance or two (learner.ts),
 *   so the host waits `learnMs` for that before asking peers, unless it just installed a snapshot.
 * - An answer that is a snapshot (the peer's log does not reach back far enough) is installed first; the next
 *   answer then carries the decisions after it.
 * - Watchdog: a join after which nothing is decided at or past its instance within `watchdogMs` (the restart
 *   leader it follows died, say) is tried again rather than waited on forever.
 * - Ready means ready: the host serves clients only once it started the group, or joined and applied every
 *   instance before the one it joined at (`Serve`, once). Until then its clients are told to come back.
 */
import { type QuitRecord, takesPartAgain } from "./tob.js"
import type { ProcessId } from "./types.js"
import { compareIds } from "./value.js"

export interface RejoinParams {
  readonly self: ProcessId
  /** The group's members as this process knows them at start (updated by `Members`). */
  readonly members: ReadonlyArray<ProcessId>
  /** A round period of the group's engines: learning and the watchdog are counted in rounds. */
  readonly roundPeriodMs: number
  /** Bootstrap: how long every peer is waited for before a majority is enough (default 10 s). */
  readonly allPeersMs?: number
  /** Bootstrap: how long a majority is waited for before whoever answers is enough (default 60 s). */
  readonly majorityMs?: number
  /** Bootstrap: how often peers are asked again while waiting for them (default 100 ms). */
  readonly askEveryMs?: number
  /** How long after a failed attempt peers are asked again (default 200 ms). */
  readonly retryMs?: number
  /** After a self-quit, how long the engine may catch up as a learner (default: `learnMs`). */
  readonly learnMs?: number
  /** How long a join may go without a decision past it (default: `watchdogMs`). */
  readonly watchdogMs?: number
}

/** What one peer answered to "where is the group?" (a CatchUpReply, reduced to what the choice needs). */
export interface PeerAnswer {
  readonly peer: ProcessId
  /** The instance the asker would join at: one past the peer's last decision (1: it decided nothing yet). */
  readonly joinInstance: number
  /** The peer's own engine is out of the group too. */
  readonly rejoining: boolean
  /** The peer sent a state snapshot: its log does not reach back to the asker's position. */
  readonly snapshot: boolean
  /** The asker is a member of `joinInstance` in the peer's membership schedule. */
  readonly member: boolean
  /**
   * The attempt at `joinInstance` the peer's engine is in (taking part) or self-quit (rejoining); -1 when it
   * never opened `joinInstance`.
   */
  readonly attempt: number
}

/** One attempt of one instance (popuc-multi.ts, "Attempts"). */
export interface InstanceAttempt {
  readonly instance: number
  readonly attempt: number
}

/** The peer to join with, and whether this process opens the join instance itself. */
export interface PeerChoice {
  readonly peer: ProcessId
  readonly joinInstance: number
  readonly snapshot: boolean
  readonly startNow: boolean
  /** No answering peer's engine runs: the join instance is opened anew, after an aborted attempt of it. */
  readonly collapsed: boolean
  /** The attempt at `joinInstance` to take part in. */
  readonly attempt: number
}

export type RejoinPhase =
  /** Asking peers whether the group runs; `asking` false while waiting to ask again. */
  | { readonly _tag: "Bootstrapping"; readonly startedMs: number; readonly asking: boolean }
  /** Peers asked for a catch-up; waiting for their answers. */
  | { readonly _tag: "Asking" }
  /** An attempt failed; peers are asked again at the timer. */
  | { readonly _tag: "Waiting" }
  /** After a self-quit: the engine may catch up as a learner before the timer. */
  | { readonly _tag: "Learning" }
  /** Fetching and installing `peer`'s snapshot. */
  | { readonly _tag: "Restoring"; readonly peer: ProcessId }
  /**
   * The engine was told to join at `instance` (or rejoined there as a learner); the watchdog runs.
   * `takingPart`: it opened the instance (not waiting for a restart leader's round-1 message any more).
   */
  | { readonly _tag: "Joined"; readonly instance: number; readonly crashes: number; readonly takingPart: boolean }
  /** Taking part: something was decided at or past the instance it joined at (or it started the group). */
  | { readonly _tag: "Running" }
  | { readonly _tag: "Closed" }

export interface RejoinState {
  readonly params: RejoinParams
  readonly phase: RejoinPhase
  readonly members: ReadonlyArray<ProcessId>
  /** Every instance before this one is applied by the host. */
  readonly nextInstance: number
  /** The attempt the engine self-quit last after taking part in it: never joined again. */
  readonly quit: QuitRecord | undefined
  /** The attempt the engine opened last, if it was not the first (attempt 0) of its instance. */
  readonly started: InstanceAttempt | undefined
  /** A snapshot installed at this instance that no join has taken the engine past yet. */
  readonly restoredAt: number | undefined
  /** The host serves clients (see above); never goes back. */
  readonly serving: boolean
  /** Id of the only timer that counts; a timer with another id is stale. */
  readonly timer: number
  /** Id of the last `Ask`: only its answers count. */
  readonly asked: number
  /** Self-quits the engine reported, joins sent, snapshots installed, learner rejoins: for stats. */
  readonly selfQuits: number
  readonly joins: number
  readonly restores: number
  readonly learnerRejoins: number
  /** Consecutive attempts that found no peer to join with (logged now and then). */
  readonly fruitless: number
}

export type RejoinInput =
  | { readonly _tag: "Start"; readonly nowMs: number }
  /** One round of asking every peer: who answered, and what. */
  | {
      readonly _tag: "Answers"
      /** The `Ask` answered. */
      readonly ask: number
      readonly nowMs: number
      readonly answers: ReadonlyArray<PeerAnswer>
    }
  | { readonly _tag: "Timer"; readonly nowMs: number; readonly id: number }
  /** The engine self-quit `attempt` of `instance`; `entered`: it had opened round 1 there. */
  | {
      readonly _tag: "EngineCrashed"
      readonly nowMs: number
      readonly instance: number
      readonly attempt: number
      readonly entered: boolean
    }
  /** The engine caught up as a learner and takes part again from `instance`. */
  | { readonly _tag: "EngineRejoined"; readonly nowMs: number; readonly instance: number }
  /** The engine opened round 1 of `attempt` (> 0) of `instance`. */
  | { readonly _tag: "EngineStarted"; readonly instance: number; readonly attempt: number }
  /** The host applied `instance` (and every one before it). */
  | { readonly _tag: "Applied"; readonly instance: number }
  /** The host installed the snapshot it was told to fetch: every instance before `instance` is reflected. */
  | { readonly _tag: "Restored"; readonly nowMs: number; readonly instance: number }
  | { readonly _tag: "RestoreFailed"; readonly nowMs: number; readonly reason: string }
  | { readonly _tag: "JoinFailed"; readonly nowMs: number; readonly reason: string }
  /** The members the host now applies (a membership change took effect). */
  | { readonly _tag: "Members"; readonly members: ReadonlyArray<ProcessId> }
  | { readonly _tag: "Close" }

export type RejoinOutput =
  /** Ask every peer for what follows `fromInstance`; answer with `Answers` (same `ask`). */
  | { readonly _tag: "Ask"; readonly ask: number; readonly fromInstance: number }
  | { readonly _tag: "SetTimer"; readonly id: number; readonly afterMs: number }
  /** Start a new group (Alg. 3). */
  | { readonly _tag: "SyncStart" }
  /** Fetch and install the snapshot `peer` announced in its last answer; answer `Restored` or `RestoreFailed`. */
  | { readonly _tag: "Restore"; readonly peer: ProcessId }
  /**
   * Join the engine with `peer`'s last answer (its decisions from the asked position), opening the instance
   * now or following the restart leader; `snapshotAt`: the installed snapshot the join starts from.
   */
  | {
      readonly _tag: "Join"
      readonly peer: ProcessId
      readonly joinInstance: number
      readonly startNow: boolean
      /** The group collapsed: `joinInstance` is reopened in a new attempt, behind the lowest id (for logs). */
      readonly collapsed: boolean
      /** The attempt at `joinInstance` to take part in (popuc-multi.ts, "Attempts"). */
      readonly attempt: number
      readonly snapshotAt: number | undefined
    }
  /** From now on the host serves clients. */
  | { readonly _tag: "Serve" }
  | { readonly _tag: "Log"; readonly level: "info" | "warn"; readonly message: string }

export interface RejoinStep {
  readonly state: RejoinState
  readonly out: ReadonlyArray<RejoinOutput>
}

export const DEFAULT_ALL_PEERS_MS = 10_000
export const DEFAULT_MAJORITY_MS = 60_000
export const DEFAULT_ASK_EVERY_MS = 100
export const DEFAULT_RETRY_MS = 200
/** Fruitless attempts between two log lines about them. */
const LOG_EVERY_FRUITLESS = 25

/** How long a self-quit engine is given to catch up as a learner: a few instances, at least 100 ms. */
export const learnMs = (p: RejoinParams): number => p.learnMs ?? Math.max(100, 8 * p.roundPeriodMs)
/** How long a join may go without a decision at or past its instance before it is tried again. */
export const watchdogMs = (p: RejoinParams): number => p.watchdogMs ?? Math.max(2_000, 20 * p.roundPeriodMs)

export const createRejoin = (params: RejoinParams): RejoinState => ({
  params,
  phase: { _tag: "Bootstrapping", startedMs: 0, asking: false },
  members: params.members,
  nextInstance: 1,
  quit: undefined,
  started: undefined,
  restoredAt: undefined,
  serving: false,
  timer: 0,
  asked: 0,
  selfQuits: 0,
  joins: 0,
  restores: 0,
  learnerRejoins: 0,
  fruitless: 0
})

/**
 * Whether a snapshot the shell fetched (reflecting every instance before `snapshotInstance`) may still be
 * installed: only while the core waits for it and only if it is ahead of what the host applied. The engine
 * may have caught up as a learner meanwhile; installing the snapshot then would take the host's state back
 * and lose what it applied since (found by the simulator, shell-async). Otherwise the shell reports
 * `RestoreFailed`.
 */
export const mayInstallSnapshot = (s: RejoinState, snapshotInstance: number): boolean =>
  s.phase._tag === "Restoring" && snapshotInstance > s.nextInstance

/** The engine takes part in the group (as opposed to starting, joining or rejoining). */
export const isRunning = (s: RejoinState): boolean => s.phase._tag === "Running"

/** What this process answers a peer that asks where the group is (`PeerAnswer` without the peer's view). */
export interface PeerStatus {
  readonly joinInstance: number
  /** Its engine does not take part now: self-quit, or joined and waiting for a restart leader. */
  readonly rejoining: boolean
  readonly attempt: number
}

export const peerStatus = (s: RejoinState): PeerStatus => {
  const joinInstance = s.nextInstance
  const takingPart = s.phase._tag === "Running" || (s.phase._tag === "Joined" && s.phase.takingPart)
  if (takingPart) {
    const attempt = s.started?.instance === joinInstance ? s.started.attempt : 0
    return { joinInstance, rejoining: false, attempt }
  }
  return { joinInstance, rejoining: true, attempt: s.quit?.instance === joinInstance ? s.quit.attempt : -1 }
}

/**
 * The answer to join with (see the module comment): `peers` is how many peers were asked, `quit` the attempt
 * this process self-quit last. Answers from a group that decided nothing yet, or that this process is not a
 * member of yet, do not count towards a choice (but do count as answered).
 */
export const choosePeer = (
  self: ProcessId,
  answers: ReadonlyArray<PeerAnswer>,
  peers: number,
  quit: QuitRecord | undefined
): PeerChoice | undefined => {
  const useful = answers.filter((a) => a.joinInstance > 1 && a.member)
  const live = useful.filter((a) => !a.rejoining)
  if (live.length > 0) {
    const best = mostAdvanced(live)
    const attempt = Math.max(0, best.attempt)
    // Its peers still run the attempt this process quit: it waits for them to decide, then joins after it.
    if (takesPartAgain(quit, best.joinInstance, attempt)) return undefined
    return {
      peer: best.peer,
      joinInstance: best.joinInstance,
      snapshot: best.snapshot,
      startNow: true,
      collapsed: false,
      attempt
    }
  }
  if (useful.length === 0 || answers.length < peers) return undefined
  const best = mostAdvanced(useful)
  let highest = quit?.entered && quit.instance === best.joinInstance ? quit.attempt : -1
  for (const a of answers) if (a.joinInstance === best.joinInstance) highest = Math.max(highest, a.attempt)
  const leader = [self, ...answers.map((a) => a.peer)].sort(compareIds)[0]
  return {
    peer: best.peer,
    joinInstance: best.joinInstance,
    snapshot: best.snapshot,
    startNow: leader === self,
    collapsed: true,
    attempt: highest + 1
  }
}

/** The answer with the highest join instance, the lowest id among equals. */
const mostAdvanced = (answers: ReadonlyArray<PeerAnswer>): PeerAnswer => {
  let best = answers[0]!
  for (const a of answers) {
    if (
      a.joinInstance > best.joinInstance ||
      (a.joinInstance === best.joinInstance && compareIds(a.peer, best.peer) < 0)
    ) {
      best = a
    }
  }
  return best
}

/** Bootstrap barrier: keep waiting for peers (see the module comment)? */
export const waitForPeers = (params: RejoinParams, peerCount: number, answered: number, waitedMs: number): boolean =>
  answered < peerCount &&
  (waitedMs < (params.allPeersMs ?? DEFAULT_ALL_PEERS_MS) ||
    (answered < Math.floor(peerCount / 2) && waitedMs < (params.majorityMs ?? DEFAULT_MAJORITY_MS)))

const peersOf = (s: RejoinState): ReadonlyArray<ProcessId> => s.members.filter((m) => m !== s.params.self)

/** The first instance the host has not got: what a catch-up asks for. */
const position = (s: RejoinState): number => Math.max(s.nextInstance, s.restoredAt ?? 0)

type Out = Array<RejoinOutput>

const withTimer = (s: RejoinState, afterMs: number, out: Out): RejoinState => {
  const id = s.timer + 1
  out.push({ _tag: "SetTimer", id, afterMs })
  return { ...s, timer: id }
}

/** Asks the peers; `phase` is what the process is in while they answer. */
const askPeers = (s: RejoinState, phase: RejoinPhase, out: Out): RejoinState => {
  const id = s.asked + 1
  out.push({ _tag: "Ask", ask: id, fromInstance: position(s) })
  return { ...s, asked: id, phase }
}

const ask = (s: RejoinState, out: Out): RejoinState => askPeers(s, { _tag: "Asking" }, out)

const retryLater = (s: RejoinState, out: Out): RejoinState =>
  withTimer({ ...s, phase: { _tag: "Waiting" } }, s.params.retryMs ?? DEFAULT_RETRY_MS, out)

const serve = (s: RejoinState, out: Out): RejoinState => {
  if (s.serving) return s
  out.push({ _tag: "Serve" })
  return { ...s, serving: true }
}

/** Joined at `instance`: serves once every instance before it is applied (and no self-quit came since). */
const checkCaughtUp = (s: RejoinState, out: Out): RejoinState => {
  const phase = s.phase
  if (phase._tag !== "Joined" || phase.crashes !== s.selfQuits) return s
  let state = s
  if (s.nextInstance >= phase.instance) state = serve(state, out)
  // Something was decided at or past the join instance: the engine takes part.
  if (s.nextInstance > phase.instance) state = { ...state, phase: { _tag: "Running" }, restoredAt: undefined }
  return state
}

const act = (s: RejoinState, choice: PeerChoice, out: Out): RejoinState => {
  const state = { ...s, fruitless: 0 }
  if (choice.snapshot) {
    out.push({ _tag: "Restore", peer: choice.peer })
    return { ...state, phase: { _tag: "Restoring", peer: choice.peer } }
  }
  out.push({
    _tag: "Join",
    peer: choice.peer,
    joinInstance: choice.joinInstance,
    startNow: choice.startNow,
    collapsed: choice.collapsed,
    attempt: choice.attempt,
    snapshotAt: state.restoredAt
  })
  out.push({
    _tag: "Log",
    level: "info",
    message: `joined at instance ${choice.joinInstance} with ${choice.peer}${choice.collapsed ? `, reopened in attempt ${choice.attempt} after the group collapsed` : ""}${choice.startNow ? "" : " (following the restart leader)"}`
  })
  const joined: RejoinState = {
    ...state,
    joins: state.joins + 1,
    started: choice.startNow ? { instance: choice.joinInstance, attempt: choice.attempt } : state.started,
    phase: { _tag: "Joined", instance: choice.joinInstance, crashes: state.selfQuits, takingPart: choice.startNow }
  }
  return checkCaughtUp(withTimer(joined, watchdogMs(s.params), out), out)
}

const onAnswers = (s: RejoinState, nowMs: number, answers: ReadonlyArray<PeerAnswer>, out: Out): RejoinState => {
  const phase = s.phase
  const choice = choosePeer(s.params.self, answers, peersOf(s).length, s.quit)
  if (phase._tag === "Bootstrapping") {
    if (!phase.asking) return s
    if (choice !== undefined) return act(s, choice, out)
    // The group runs, but without this process yet: never start another one, wait to be added.
    if (answers.some((a) => a.joinInstance > 1)) return fruitless(s, answers, out)
    const peerCount = peersOf(s).length
    if (waitForPeers(s.params, peerCount, answers.length, nowMs - phase.startedMs)) {
      const waiting = { ...s, phase: { ...phase, asking: false } }
      return withTimer(waiting, s.params.askEveryMs ?? DEFAULT_ASK_EVERY_MS, out)
    }
    if (answers.length < peerCount) {
      out.push({
        _tag: "Log",
        level: "warn",
        message: `starting the group with ${answers.length} of ${peerCount} peers answering`
      })
    }
    out.push({ _tag: "SyncStart" })
    return serve({ ...s, phase: { _tag: "Running" } }, out)
  }
  if (phase._tag !== "Asking") return s
  if (choice !== undefined) return act(s, choice, out)
  return fruitless(s, answers, out)
}

/** Why no answer could be joined with, for the log line. */
const whyFruitless = (s: RejoinState, answers: ReadonlyArray<PeerAnswer>, attempts: number): string => {
  if (answers.some((a) => a.joinInstance > 1 && !a.member)) {
    return `not a member of the group yet (${attempts} attempts): waiting for a membership change that adds it`
  }
  const useful = answers.filter((a) => a.joinInstance > 1)
  const silent = peersOf(s).filter((p) => !answers.some((a) => a.peer === p))
  if (useful.length > 0 && useful.every((a) => a.rejoining) && silent.length > 0) {
    return `the group collapsed (every engine self-quit); reopening its instance needs every member's answer, waiting for ${silent.join(", ")} (${attempts} attempts)`
  }
  if (s.quit !== undefined && useful.some((a) => !a.rejoining && a.joinInstance === s.quit?.instance)) {
    return `waiting for the group to decide instance ${s.quit.instance}, which this engine self-quit (${attempts} attempts)`
  }
  return `no peer can help yet (${attempts} attempts, ${answers.length} of ${peersOf(s).length} answered)`
}

/** No answer to join with: ask again later, and say so now and then. */
const fruitless = (s: RejoinState, answers: ReadonlyArray<PeerAnswer>, out: Out): RejoinState => {
  const fruitless = s.fruitless + 1
  if (fruitless % LOG_EVERY_FRUITLESS === 0) {
    out.push({ _tag: "Log", level: "warn", message: whyFruitless(s, answers, fruitless) })
  }
  return retryLater({ ...s, fruitless }, out)
}

const onTimer = (s: RejoinState, out: Out): RejoinState => {
  switch (s.phase._tag) {
    case "Bootstrapping":
      return askPeers(s, { ...s.phase, asking: true }, out)
    case "Waiting":
    case "Learning":
      return ask(s, out)
    case "Joined":
      out.push({
        _tag: "Log",
        level: "warn",
        message: `nothing decided within ${watchdogMs(s.params)} ms of joining at instance ${s.phase.instance}; joining again`
      })
      return ask(s, out)
    default:
      return s
  }
}

const onCrashed = (s: RejoinState, out: Out): RejoinState => {
  const state = { ...s, selfQuits: s.selfQuits + 1 }
  // An attempt under way (asking, restoring) goes on: its join will be made with fresh answers anyway.
  if (s.phase._tag !== "Running" && s.phase._tag !== "Joined") return state
  // Past a snapshot the engine must be joined with it, whatever it learns meanwhile.
  if (state.restoredAt !== undefined) return ask(state, out)
  return withTimer({ ...state, phase: { _tag: "Learning" } }, learnMs(s.params), out)
}

const onRejoined = (s: RejoinState, nowMs: number, instance: number, out: Out): RejoinState => {
  if (s.phase._tag === "Closed") return s
  out.push({
    _tag: "Log",
    level: "info",
    message: `the engine caught up as a learner and takes part again at instance ${instance} (${nowMs.toFixed(0)} ms)`
  })
  const joined: RejoinState = {
    ...s,
    learnerRejoins: s.learnerRejoins + 1,
    phase: { _tag: "Joined", instance, crashes: s.selfQuits, takingPart: true }
  }
  return checkCaughtUp(withTimer(joined, watchdogMs(s.params), out), out)
}

export const stepRejoin = (s: RejoinState, input: RejoinInput): RejoinStep => {
  const out: Out = []
  if (s.phase._tag === "Closed") return { state: s, out }
  switch (input._tag) {
    case "Start": {
      if (s.phase._tag !== "Bootstrapping" || s.phase.asking) return { state: s, out }
      return { state: askPeers(s, { _tag: "Bootstrapping", startedMs: input.nowMs, asking: true }, out), out }
    }
    case "Answers":
      if (input.ask !== s.asked) return { state: s, out }
      return { state: onAnswers(s, input.nowMs, input.answers, out), out }
    case "Timer":
      return input.id === s.timer ? { state: onTimer(s, out), out } : { state: s, out }
    case "EngineCrashed": {
      const quit = input.entered ? { instance: input.instance, attempt: input.attempt, entered: true } : s.quit
      return { state: onCrashed({ ...s, quit }, out), out }
    }
    case "EngineRejoined":
      return { state: onRejoined(s, input.nowMs, input.instance, out), out }
    case "EngineStarted": {
      const started = { instance: input.instance, attempt: input.attempt }
      const phase = s.phase._tag === "Joined" ? { ...s.phase, takingPart: true } : s.phase
      return { state: { ...s, started, phase }, out }
    }
    case "Applied": {
      if (input.instance < s.nextInstance) return { state: s, out }
      return { state: checkCaughtUp({ ...s, nextInstance: input.instance + 1 }, out), out }
    }
    case "Restored": {
      if (s.phase._tag !== "Restoring") return { state: s, out }
      out.push({
        _tag: "Log",
        level: "info",
        message: `restored ${s.phase.peer}'s snapshot at instance ${input.instance}; catching up on the decisions after it`
      })
      const restored = {
        ...s,
        restores: s.restores + 1,
        restoredAt: input.instance,
        nextInstance: Math.max(s.nextInstance, input.instance)
      }
      return { state: ask(restored, out), out }
    }
    case "RestoreFailed":
    case "JoinFailed": {
      if (input._tag === "RestoreFailed" && s.phase._tag !== "Restoring") return { state: s, out }
      out.push({ _tag: "Log", level: "warn", message: `${input.reason}; trying again` })
      return { state: retryLater(s, out), out }
    }
    case "Members":
      return { state: { ...s, members: input.members }, out }
    case "Close":
      return { state: { ...s, phase: { _tag: "Closed" } }, out }
  }
}
