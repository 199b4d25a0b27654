/**
 * One POPUC consensus instance (the paper's Alg. 2, "ckcuc") as a pure step function: no clock, no I/O.
 * The shell feeds `Start`, `RoundTimeout` and `Receive`, and carries out `Send`, `SetTimer`, `Decide` and
 * `Crash`. N = 2t+1 processes, collaborative consensus: the decision is a *set* of proposed values.
 *
 * The round change routine ("close round r"), run on timeout or early on a message of round r+1:
 *
 *   suspect ∪= members \ roundLiveset             missing this round => suspected for the rest of the instance
 *   if |suspect| > t: crash                        "I am not in the correct majority"
 *   elif p ∉ locked:
 *     if r > |suspect| or locked ≠ ∅: locked ∪= {p}
 *   elif |locked| > t: decide(V)                   only a process locked in an *earlier* round decides early
 *   if r > t: decide(V)
 *   r += 1; roundLiveset = {p} ∪ locked; send (r, V, locked) to members \ (suspect \ locked)
 *
 * The early decision is an `elif` of "p ∉ locked", as App. A (Lemma A.6) states: "[the early decision] is the
 * elif branch of [the lock test], so it is reached only when p_i ∈ locked_i already". Checking |locked| > t in
 * the round a process first locks lets it decide and go silent while its peers do not yet list it as locked;
 * they then suspect it and a correct peer can exceed t suspicions (see popuc-instance.test.ts).
 *
 * With `RoundTimerConfig.closeOnAllHeard` a round also closes as soon as every member not suspected has been
 * heard from in it ("allHeard"), and a message of the next round is held until then instead of closing the
 * round at once (see round-timer.ts for why both, and why safety is unchanged). Such a round's successor times
 * out where it would have in timed rounds (`SetTimer.chained`): round k of an instance still ends at the
 * latest k round periods after this process opened it. A timer measured from the early close instead would
 * expire up to a round before a correct peer's message is due: the peer may have had to wait out its own
 * round for a message this process got at once (a sender that crashed halfway through its multi-send), and
 * the simulator showed that pushing correct processes past t suspicions.
 *
 * Round 0 is the wait between `propose` and the first timeout (Alg. 2 line 6, "start-timer"): closing it
 * changes nothing but opens round 1. `Start` closes it at once; a round-1 message from a peer closes it too,
 * which is the paper's "a process may lag behind, e.g., receive a message before even starting".
 */
import { closesOnAllHeard, nextRoundDurationMs, type RoundCloseCause, type RoundTimerConfig } from "./round-timer.js"
import type { ProcessId, RoundMsg, Step, Value, ValueRef } from "./types.js"
import { sortIds, sortValues, valueKey } from "./value.js"

export interface InstanceParams {
  readonly instance: number
  /** Which attempt at `instance` this is (default 0; popuc-multi.ts, "Attempts"). */
  readonly attempt?: number
  readonly self: ProcessId
  /** The member list of this instance, N = 2t+1 distinct ids including `self`. */
  readonly members: ReadonlyArray<ProcessId>
  /** This process's proposal: one value set (a batch, or a heartbeat). */
  readonly proposal: ReadonlyArray<Value>
  readonly roundTimer: RoundTimerConfig
  /**
   * Members this process suspected in the previous instance without hearing anything from them. With
   * `closeOnAllHeard` a round does not wait for them until they are heard from again (their messages are
   * taken while a round is open), so a crashed replica costs the group one timer, not one per instance until
   * it is removed. Never more than t of them are given up on early (see `allHeard`).
   */
  readonly silent?: ReadonlyArray<ProcessId>
  /** Members reported gone (`InstanceInput` "Gone") and not heard from since, carried over from the last instance. */
  readonly gone?: ReadonlyArray<ProcessId>
}

export type InstanceStatus = "running" | "decided" | "crashed"

export interface InstanceState {
  readonly instance: number
  readonly attempt: number
  readonly self: ProcessId
  readonly members: ReadonlyArray<ProcessId>
  readonly roundTimer: RoundTimerConfig
  readonly t: number
  readonly status: InstanceStatus
  readonly round: number
  /** V: every value heard so far, keyed by identity. Insertion order is deterministic, so sends are too. */
  readonly values: ReadonlyMap<string, Value>
  readonly suspect: ReadonlySet<ProcessId>
  readonly locked: ReadonlySet<ProcessId>
  readonly roundLiveset: ReadonlySet<ProcessId>
  /** Senders of this round's messages merged so far (what `closeOnAllHeard` waits on). */
  readonly heard: ReadonlySet<ProcessId>
  /** `closeOnAllHeard`: messages of the next round, at most one per sender, replayed when this round closes. */
  readonly held: ReadonlyArray<HeldMsg>
  /** `InstanceParams.silent`: not awaited by `closeOnAllHeard` unless in `heardAny`. */
  readonly unawaited: ReadonlySet<ProcessId>
  /** Members any message of this instance was received from, late, early or held ones included. */
  readonly heardAny: ReadonlySet<ProcessId>
  /** Reported gone and not heard from since: `closeOnAllHeard` does not wait for them (see "Gone"). */
  readonly gone: ReadonlySet<ProcessId>
  /** Messages discarded as late, early or from an excluded sender: omissions this process observed. */
  readonly dropped: number
}

export interface HeldMsg {
  readonly from: ProcessId
  readonly msg: RoundMsg
}

export type InstanceInput =
  | { readonly _tag: "Start"; readonly cause?: RoundCloseCause }
  | { readonly _tag: "RoundTimeout"; readonly round: number }
  | { readonly _tag: "Receive"; readonly from: ProcessId; readonly msg: RoundMsg }
  /**
   * The transport reports that `process` has no connection now, so nothing it sends can arrive (a crashed
   * replica's subscriptions are gone). With `closeOnAllHeard` rounds stop waiting for it until it is heard
   * from again; it is then suspected wherever it stays silent, exactly as if its timer had expired. A wrong
   * report (a peer reconnecting) is harmless for safety, which never depends on who is suspected when
   * (App. A), and it never makes this process quit: `allHeard` leaves closes beyond t suspects to the timer.
   */
  | { readonly _tag: "Gone"; readonly process: ProcessId }

export type InstanceOutput =
  | { readonly _tag: "Send"; readonly to: ReadonlyArray<ProcessId>; readonly msg: RoundMsg }
  | {
      readonly _tag: "SetTimer"
      readonly instance: number
      readonly round: number
      readonly afterMs: number
      /**
       * Measured from the deadline of this instance's previous timer, not from now (a round closed early on
       * all heard): the round still times out where a timed round would have, so a peer that had to wait out
       * its own timer for a message this process got is never suspected for being slower (popuc-instance.ts).
       */
      readonly chained?: boolean
    }
  | {
      readonly _tag: "Decide"
      readonly instance: number
      readonly round: number
      readonly values: ReadonlyArray<Value>
      /** Processes this one suspected during the instance, sorted (for traces and operators). */
      readonly suspects: ReadonlyArray<ProcessId>
    }
  | { readonly _tag: "Crash"; readonly instance: number; readonly round: number; readonly reason: string }

export type InstanceStep = Step<InstanceState, InstanceOutput>

/** The signature a mutated (deliberately broken) instance must have to be plugged into the simulator. */
export type StepInstance = (s: InstanceState, input: InstanceInput) => InstanceStep

/** The attempt a round message belongs to (popuc-multi.ts, "Attempts"). */
export const attemptOf = (msg: Pick<RoundMsg, "attempt">): number => msg.attempt ?? 0

export const thresholdOf = (n: number): number => {
  if (!Number.isInteger(n) || n < 1 || n % 2 === 0) throw new Error(`POPUC needs N = 2t+1 processes, got N = ${n}`)
  return (n - 1) / 2
}

export const createInstance = (p: InstanceParams): InstanceState => {
  const members = sortIds(p.members)
  if (new Set(members).size !== members.length) throw new Error("POPUC: duplicate member ids")
  if (!members.includes(p.self)) throw new Error(`POPUC: ${p.self} is not a member of instance ${p.instance}`)
  if (!Number.isInteger(p.instance) || p.instance < 1) throw new Error(`POPUC: bad instance ${p.instance}`)
  const attempt = p.attempt ?? 0
  if (!Number.isSafeInteger(attempt) || attempt < 0) throw new Error(`POPUC: bad attempt ${attempt}`)
  return {
    instance: p.instance,
    attempt,
    self: p.self,
    members,
    roundTimer: p.roundTimer,
    t: thresholdOf(members.length),
    status: "running",
    round: 0,
    values: new Map(p.proposal.map((v) => [valueKey(v), v])),
    suspect: new Set(),
    locked: new Set(),
    roundLiveset: new Set(members),
    heard: new Set(),
    held: [],
    unawaited: new Set(p.silent ?? []),
    heardAny: new Set(),
    gone: new Set((p.gone ?? []).filter((q) => q !== p.self && members.includes(q))),
    dropped: 0
  }
}

const none = (state: InstanceState): InstanceStep => ({ state, out: [] })

const countDrop = (state: InstanceState): InstanceState => ({ ...state, dropped: state.dropped + 1 })

/** The round-change routine (App. A, "A process closes round r when it runs the round change routine"). */
export const closeRound = (s: InstanceState, cause: RoundCloseCause): InstanceStep => {
  const { self, members, t, round } = s
  const missing = members.filter((p) => !s.roundLiveset.has(p) && !s.suspect.has(p))
  const suspect = missing.length === 0 ? s.suspect : new Set([...s.suspect, ...missing])
  if (suspect.size > t) {
    const reason = `suspects ${suspect.size} > t = ${t} processes at round ${round}: not in the correct majority`
    return {
      state: { ...s, suspect, status: "crashed" },
      out: [{ _tag: "Crash", instance: s.instance, round, reason }]
    }
  }
  let locked = s.locked
  let decide = false
  if (!locked.has(self)) {
    if (round > suspect.size || locked.size > 0) locked = new Set([...locked, self])
  } else if (locked.size > t) {
    decide = true
  }
  if (round > t) decide = true
  if (decide) {
    return {
      state: { ...s, suspect, locked, status: "decided" },
      out: [
        {
          _tag: "Decide",
          instance: s.instance,
          round,
          values: sortValues(s.values.values()),
          suspects: [...suspect].sort()
        }
      ]
    }
  }
  const next = round + 1
  const to = members.filter((p) => p !== self && (!suspect.has(p) || locked.has(p)))
  const msg: RoundMsg = {
    _tag: "Round",
    instance: s.instance,
    attempt: s.attempt,
    round: next,
    values: Array.from(s.values.values()),
    locked: sortIds(locked),
    decided: []
  }
  const afterMs = nextRoundDurationMs(s.roundTimer, cause)
  const out: Array<InstanceOutput> = [
    cause === "allHeard"
      ? { _tag: "SetTimer", instance: s.instance, round: next, afterMs, chained: true }
      : { _tag: "SetTimer", instance: s.instance, round: next, afterMs }
  ]
  if (to.length > 0) out.push({ _tag: "Send", to, msg })
  return {
    state: { ...s, suspect, locked, round: next, roundLiveset: new Set([self, ...locked]), heard: new Set(), held: [] },
    out
  }
}

/**
 * Decision relay: decide the set another process decided in this instance, given by its ids, if every one of
 * those values is known here; `undefined` otherwise. Safe whatever the timing, because of uniform agreement:
 * any decision of the instance is *the* decision of the instance. Not in Alg. 2; see popuc-multi.ts for why.
 */
export const adoptDecision = (
  s: InstanceState,
  decided: ReadonlyArray<ValueRef>,
  decidedAttempt: number
): InstanceStep | undefined => {
  // Only a decision of this very attempt: another attempt's relay may come from a process that decided alone
  // and died, whose decision the group could not see when it opened this attempt.
  if (s.status !== "running" || decided.length === 0 || decidedAttempt !== s.attempt) return undefined
  const values: Array<Value> = []
  for (const ref of decided) {
    const v = s.values.get(valueKey(ref))
    if (v === undefined) return undefined
    values.push(v)
  }
  return {
    state: { ...s, status: "decided" },
    out: [
      {
        _tag: "Decide",
        instance: s.instance,
        round: s.round,
        values: sortValues(values),
        suspects: [...s.suspect].sort()
      }
    ]
  }
}

/** `set` ∪ the members among `items`: the same set object when nothing is new (cheap copy-on-write). */
const unionMembers = (
  set: ReadonlySet<ProcessId>,
  items: Iterable<ProcessId>,
  members: ReadonlyArray<ProcessId>
): ReadonlySet<ProcessId> => {
  let next: Set<ProcessId> | undefined
  for (const p of items) {
    if (set.has(p) || next?.has(p) || !members.includes(p)) continue
    next ??= new Set(set)
    next.add(p)
  }
  return next ?? set
}

/** Alg. 2 lines 21-24: merge values and locks of a same-round message from a sender that is not excluded. */
const merge = (s: InstanceState, from: ProcessId, msg: RoundMsg): InstanceState => {
  let values: Map<string, Value> | undefined
  for (const v of msg.values) {
    const key = valueKey(v)
    if (s.values.has(key)) continue
    values ??= new Map(s.values)
    values.set(key, v)
  }
  const locked = msg.locked.length === 0 ? s.locked : unionMembers(s.locked, msg.locked, s.members)
  const heard = s.roundLiveset.has(from) ? s.roundLiveset : unionMembers(s.roundLiveset, [from], s.members)
  const live = msg.locked.length === 0 ? heard : unionMembers(heard, msg.locked, s.members)
  const senders = s.heard.has(from) ? s.heard : unionMembers(s.heard, [from], s.members)
  if (values === undefined && locked === s.locked && live === s.roundLiveset && senders === s.heard) return s
  return withMerge(s, values ?? s.values, locked, live, senders)
}

/**
 * The merge result built with every field in one fixed order: this runs for every message received, and a
 * fixed shape keeps it a plain allocation where an object spread of differently-built states went generic
 * (it was the simulator's hottest line).
 */
const withMerge = (
  s: InstanceState,
  values: ReadonlyMap<string, Value>,
  locked: ReadonlySet<ProcessId>,
  roundLiveset: ReadonlySet<ProcessId>,
  heard: ReadonlySet<ProcessId>
): InstanceState => ({
  instance: s.instance,
  attempt: s.attempt,
  self: s.self,
  members: s.members,
  roundTimer: s.roundTimer,
  t: s.t,
  status: s.status,
  round: s.round,
  values,
  suspect: s.suspect,
  locked,
  roundLiveset,
  heard,
  held: s.held,
  unawaited: s.unawaited,
  heardAny: s.heardAny,
  gone: s.gone,
  dropped: s.dropped
})

const onReceive = (received: InstanceState, from: ProcessId, msg: RoundMsg): InstanceStep => {
  if (
    msg.instance !== received.instance ||
    attemptOf(msg) !== received.attempt ||
    from === received.self ||
    !received.members.includes(from)
  ) {
    return none(countDrop(received))
  }
  const heard = received.heardAny.has(from)
    ? received
    : { ...received, heardAny: new Set([...received.heardAny, from]) }
  const s = heard.gone.has(from) ? back(heard, from) : heard
  let state = s
  let out: ReadonlyArray<InstanceOutput> = []
  if (msg.round === s.round + 1 && s.round >= 1 && closesOnAllHeard(s.roundTimer)) {
    // Held, not a catch-up: the round closes once everyone awaited is heard from, or at its timer.
    if (s.held.some((m) => m.from === from)) return none(countDrop(s))
    return none({ ...s, held: [...s.held, { from, msg }] })
  }
  if (msg.round === s.round + 1) {
    // Catch-up: "if r_j = r_i + 1 then end r_i, start r_j, continue below". Never more than one round.
    const closed = closeRound(s, "catchUp")
    if (closed.state.status === "crashed" && s.round >= 1) return holdForTimer(s, from, msg)
    if (closed.state.status !== "running") return closed
    state = closed.state
    out = closed.out
  }
  // Late (r_j < r_i), too early (r_j > r_i + 1) or from an excluded sender: an omission, by design.
  const excluded = state.suspect.has(from) && !state.locked.has(from)
  if (msg.round !== state.round || excluded) return { state: countDrop(state), out }
  return { state: merge(state, from, msg), out }
}

/**
 * A catch-up that would make this process quit (more than t peers unheard this round) waits for the round's
 * timer instead, the message held like a `closeOnAllHeard` one: after a stall of the whole machine the first
 * peer to resume sends its next round while the others' messages of this one are still on their way, and
 * closing at once would quit a correct process (the simulator's shell-stall). Holding a message only delays
 * it, which safety never depends on (App. A, Observation A.1); at the timer the round closes as it would have
 * (the shell's stall graces apply), with whatever arrived meanwhile.
 */
const holdForTimer = (s: InstanceState, from: ProcessId, msg: RoundMsg): InstanceStep =>
  s.held.some((m) => m.from === from) ? none(countDrop(s)) : none({ ...s, held: [...s.held, { from, msg }] })

/**
 * Is `p` waited for by `closeOnAllHeard`: not reported gone since last heard from, and not silent in the
 * previous instance or heard from since.
 */
const awaited = (s: InstanceState, p: ProcessId): boolean =>
  !s.gone.has(p) && (!s.unawaited.has(p) || s.heardAny.has(p))

/** Members this round still waits for: awaited, not suspected, not heard from yet (what a shell may probe). */
export const unheardPeers = (s: InstanceState): Array<ProcessId> =>
  s.members.filter((p) => p !== s.self && !s.suspect.has(p) && !s.heard.has(p) && awaited(s, p))

/** A report that `p` is gone: kept (also once decided, for the next instance), then a round may close. */
const onGone = (s: InstanceState, p: ProcessId): InstanceStep => {
  if (p === s.self || s.gone.has(p) || !s.members.includes(p)) return none(s)
  const state = { ...s, gone: new Set([...s.gone, p]) }
  return state.status === "running" ? settle(none(state)) : none(state)
}

/** `p` was heard from after a report that it was gone: it is awaited again. */
const back = (s: InstanceState, p: ProcessId): InstanceState => {
  const gone = new Set(s.gone)
  gone.delete(p)
  return { ...s, gone }
}

/**
 * Every awaited member not suspected has been heard from this round: nothing the timer could still add. A
 * close that would suspect more than t members (silent ones included) is left to the timer: an early close
 * must never be what makes a process quit.
 */
export const allHeard = (s: InstanceState): boolean => {
  if (s.round < 1) return false
  let suspects = s.suspect.size
  for (const p of s.members) {
    if (p === s.self || s.suspect.has(p) || s.heard.has(p)) continue
    if (awaited(s, p)) return false
    suspects++
  }
  return suspects <= s.t
}

const andThen = (first: InstanceStep, second: InstanceStep): InstanceStep => ({
  state: second.state,
  out: first.out.length === 0 ? second.out : [...first.out, ...second.out]
})

/** Closes the round, then replays the messages held for the round it opens. */
const closeAndReplay = (s: InstanceState, cause: RoundCloseCause): InstanceStep => {
  let step = closeRound(s, cause)
  for (const m of s.held) {
    if (step.state.status !== "running") break
    step = andThen(step, onReceive(step.state, m.from, m.msg))
  }
  return step
}

/** `closeOnAllHeard`: keeps closing rounds while nothing is awaited (held messages can complete the next one). */
const settle = (step: InstanceStep): InstanceStep => {
  let result = step
  while (result.state.status === "running" && closesOnAllHeard(result.state.roundTimer) && allHeard(result.state)) {
    result = andThen(result, closeAndReplay(result.state, "allHeard"))
  }
  return result
}

export const stepInstance: StepInstance = (s, input) => {
  if (input._tag === "Gone") return onGone(s, input.process)
  if (s.status !== "running") return none(s)
  switch (input._tag) {
    case "Start":
      return s.round === 0 ? settle(closeRound(s, input.cause ?? "timeout")) : none(s)
    case "RoundTimeout":
      // A timer armed for an earlier round may still fire after a catch-up: ignore it.
      return input.round === s.round ? settle(closeAndReplay(s, "timeout")) : none(s)
    case "Receive":
      return settle(onReceive(s, input.from, input.msg))
  }
}
