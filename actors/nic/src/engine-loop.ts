/**
 * The engine loop: the imperative shell around the pure TOB core, with every side effect injected
 * (transport, timers, event sink). The worker thread (engine-worker.ts) wires it to NATS and real timers;
 * tests wire it to an in-memory network. It turns wire bytes, timer expiries and host commands into core
 * inputs, and core outputs into sends, timers and events for the host.
 */
import {
  type ArmedTimer,
  closesOnAllHeard,
  createTob,
  type Incarnation,
  isTakingPart,
  type MembershipSchedule,
  membersAt,
  type ProcessId,
  type RoundTimerConfig,
  scheduleOf,
  stepTob,
  type TobInput,
  type TobOutput,
  type TobState,
  unheardPeers,
  type Value,
  type WireMsg
} from "./core/index.js"
import { compactRound, wholeRound } from "./core/value-refs.js"
import { type OnTimerExpiry, onTimerExpiry, roundTimerDeadline, timerPolicyOf } from "./engine-timers.js"
import { JoinReplay } from "./join-replay.js"
import { LatencyHistogram } from "./latency-histogram.js"
import { RoundResolver } from "./round-resolver.js"
import { decodeWire, encodeWire, ownPayload } from "./wire.js"

/**
 * How round messages of rounds 2 and later carry their values (core/value-refs.ts): `refs` names client values
 * by identity (their bodies travelled in round 1), `full` sends every body again as Alg. 2 does. Receivers
 * take either, so a group may mix them (e.g. during an upgrade).
 */
export type RoundValues = "refs" | "full"
export const ROUND_VALUES_MODES: ReadonlyArray<RoundValues> = ["refs", "full"]
export const DEFAULT_ROUND_VALUES: RoundValues = "refs"

export interface EngineConfig {
  readonly group: string
  readonly self: ProcessId
  /** The host process's incarnation (core/types.ts), stamped on every value this engine proposes. */
  readonly incarnation: Incarnation
  readonly members: ReadonlyArray<ProcessId>
  readonly roundTimer: RoundTimerConfig
  readonly maxBatchBytes: number
  readonly maxPending?: number
  /** Default `refs`. */
  readonly roundValues?: RoundValues
}

/** What the host asks of its engine (the paper's host-to-NIC interface). */
export type EngineCommand =
  | { readonly _tag: "Broadcast"; readonly requestId: number; readonly payload: Uint8Array }
  | { readonly _tag: "ProposeMembership"; readonly requestId: number; readonly members: ReadonlyArray<ProcessId> }
  | { readonly _tag: "SyncStart" }
  /**
   * The core's Join input (see TobInput). The round messages of the join instance received while out are
   * replayed after it; those of an aborted attempt of that instance (a collapse) are told apart by their
   * attempt and ignored (core/popuc-multi.ts, "Attempts").
   */
  | Extract<TobInput, { readonly _tag: "Join" }>
  | { readonly _tag: "Failure"; readonly process: ProcessId }
  | { readonly _tag: "ReportStats" }

/**
 * An instance was decided; `values` are the ones delivered now (no heartbeats, no duplicates), in order.
 * Each payload has an ArrayBuffer of its own, exactly its size, so posting the event to the host copies just
 * the payload (transferring the buffers instead costs more than copying a few KiB).
 */
export interface DecidedEvent {
  readonly _tag: "Decided"
  readonly instance: number
  readonly rounds: number
  readonly decidedSetSize: number
  /** Processes this engine suspected during the instance. */
  readonly suspects: ReadonlyArray<ProcessId>
  readonly values: ReadonlyArray<Value>
  readonly elapsedMs: number
  /** Start of each round of this instance, in ms before the decision (for round spans). */
  readonly roundStartsAgoMs: ReadonlyArray<number>
}

/** An instance being reported to the host, filled by the outputs of one step (see `perform`). */
interface DecidedEntry {
  readonly instance: number
  readonly rounds: number
  readonly size: number
  readonly suspects: ReadonlyArray<ProcessId>
  readonly values: Array<Value>
}

/** Replayed or learned instances were not decided here in rounds: 0 rounds, no suspects unless given. */
const decidedEntry = (
  instance: number,
  known: Partial<Pick<DecidedEntry, "rounds" | "size" | "suspects">> = {}
): DecidedEntry => ({
  instance,
  rounds: known.rounds ?? 0,
  size: known.size ?? 0,
  suspects: known.suspects ?? [],
  values: []
})

/** What the engine tells its host. */
export type EngineEvent =
  | { readonly _tag: "Queued"; readonly requestId: number; readonly proposer: ProcessId; readonly seq: number }
  | { readonly _tag: "Rejected"; readonly requestId: number; readonly reason: string }
  | DecidedEvent
  /**
   * The engine self-quit at `instance`; `entered`: it had opened round 1 of `attempt` there, which it never
   * takes part in again (core/popuc-multi.ts, "Attempts").
   */
  | {
      readonly _tag: "Crashed"
      readonly instance: number
      readonly attempt: number
      readonly entered: boolean
      readonly reason: string
    }
  /** The engine opened round 1 of a higher attempt of `instance` (never sent for the first one, attempt 0). */
  | { readonly _tag: "Attempt"; readonly instance: number; readonly attempt: number }
  | { readonly _tag: "Left"; readonly instance: number }
  /** After a self-quit, the engine caught up as a learner and takes part again from `instance`. */
  | { readonly _tag: "Rejoined"; readonly instance: number }
  | { readonly _tag: "Dropped"; readonly reason: string }
  | { readonly _tag: "Stats"; readonly stats: EngineStats }

export interface EngineStats {
  readonly instancesDecided: number
  readonly roundsDecided: number
  readonly dropped: number
  readonly crashes: number
  /** Peers the transport reported gone while a round waited for them. */
  readonly goneReports: number
  readonly pending: number
  /** Round messages that waited for value bodies this engine lacked, and those dropped still waiting. */
  readonly heldForValues: number
  readonly heldForValuesDropped: number
  readonly interactionLatencyMs: ReturnType<LatencyHistogram["summary"]>
  readonly roundTimeMs: ReturnType<LatencyHistogram["summary"]>
  readonly schedule: MembershipSchedule
  readonly phase: TobState["phase"]
  readonly nextDeliverInstance: number
}

export interface EngineIo {
  readonly send: (to: ProcessId, bytes: Uint8Array) => void
  /**
   * To every engine of the group but this one, in one publish that the server fans out (`send` to each peer
   * otherwise). Only used when a message goes to every other member: one this engine excludes must not get it.
   */
  readonly sendToAll?: (bytes: Uint8Array) => void
  /**
   * Calls `fire` once `afterMs` have passed; may return a cancel, which the loop calls when the timer became
   * moot (its round ended): a cancelled timer never wakes the thread.
   */
  readonly setTimer: (afterMs: number, fire: () => void) => (() => void) | undefined
  /** Milliseconds, monotonic within the process. */
  readonly nowMs: () => number
  /** Microseconds since the epoch, comparable across processes of one host (interaction latency). */
  readonly wallUs: () => number
  readonly emit: (event: EngineEvent) => void
  /**
   * Asks the transport whether `peer` is connected at all; calls `gone` only when it is certainly not (the
   * server knows no subscriber of its engine). Without it, a round waits for a silent peer until its timer.
   */
  readonly probe?: (peer: ProcessId, gone: () => void) => void
}

export interface EngineLoop {
  readonly onWire: (bytes: Uint8Array) => void
  readonly onCommand: (command: EngineCommand) => void
  readonly state: () => TobState
}

/** Replacements for parts of the loop: the simulator's deliberately broken variants (sim/mutants.ts). */
export interface EngineLoopParts {
  readonly stepTob?: (s: TobState, input: TobInput) => ReturnType<typeof stepTob>
  readonly onTimerExpiry?: OnTimerExpiry
  /** Resolving a round message's references (core/value-refs.ts). */
  readonly resolveRound?: ConstructorParameters<typeof RoundResolver>[1]
}

export const createEngineLoop = (config: EngineConfig, io: EngineIo, parts: EngineLoopParts = {}): EngineLoop => {
  let state = createTob({
    self: config.self,
    incarnation: config.incarnation,
    members: config.members,
    roundTimer: config.roundTimer,
    maxBatchBytes: config.maxBatchBytes,
    ...(config.maxPending === undefined ? {} : { maxPending: config.maxPending })
  })
  const interaction = new LatencyHistogram()
  const roundTime = new LatencyHistogram()
  let instancesDecided = 0
  let roundsDecided = 0
  let dropped = 0
  let crashes = 0
  let goneReports = 0
  let lastRoundStartMs: number | undefined
  /** Round start times of instances not decided yet (bounded: cleared on decision, crash and join). */
  const roundStarts = new Map<number, Array<number>>()
  let instanceStartMs = io.nowMs()
  /** `to` is every member of the message's instance but this engine (sync-start messages: instance 1's). */
  const toEveryPeer = (to: ReadonlyArray<ProcessId>, msg: WireMsg): boolean => {
    const members = membersAt(scheduleOf(state), msg._tag === "Round" ? msg.instance : 1)
    return to.length === members.length - 1 && members.every((m) => m === config.self || to.includes(m))
  }
  /** The last round timer armed: a chained one is measured from its deadline. */
  let lastTimer: ArmedTimer | undefined
  /**
   * Cancels of the timers of the round under way (its timer, stall graces, probes). The core waits for one
   * timer at a time and ignores the timeout of any round but its current one (core/popuc-instance.ts), so a
   * new SetTimer makes every earlier timer moot: cancelled, they do not wake the thread once a round, or
   * three, after it closed, which under load is most rounds (they close on all heard well before the timer).
   */
  let roundTimers: Array<() => void> = []
  const armRoundTimer = (afterMs: number, fire: () => void) => {
    const cancel = io.setTimer(afterMs, fire)
    if (cancel !== undefined) roundTimers.push(cancel)
  }
  const timers = timerPolicyOf(config.roundTimer)
  const expiryAction = parts.onTimerExpiry ?? onTimerExpiry
  const stepCore = parts.stepTob ?? stepTob
  /** When the last well-formed engine message arrived (stalls, engine-timers.ts). */
  let lastHeardMs = Number.NEGATIVE_INFINITY
  /** Closing round `round` of `instance` now would suspect more than t peers (engine-timers.ts: quitting). */
  const wouldQuit = (instance: number, round: number): boolean => {
    const current = state.phase === "running" ? state.multi?.current : undefined
    if (current === undefined || current.instance !== instance || current.round !== round) return false
    if (current.status !== "running") return false
    // As the round change routine counts them (core closeRound): suspected, or not heard this round.
    const missing = current.members.filter((p) => !current.roundLiveset.has(p) && !current.suspect.has(p))
    return current.suspect.size + missing.length > current.t
  }
  /** Gone peers (engine-timers.ts): only rounds closed on all heard wait for silent peers past their round. */
  const probe = closesOnAllHeard(config.roundTimer) ? io.probe : undefined
  const probeUnheard = (instance: number, round: number) => {
    const current = state.phase === "running" ? state.multi?.current : undefined
    if (probe === undefined || current === undefined) return
    if (current.instance !== instance || current.round !== round || current.status !== "running") return
    const unheard = unheardPeers(current)
    for (const peer of unheard) {
      probe(peer, () => {
        goneReports++
        apply({ _tag: "Gone", process: peer }, undefined)
      })
    }
    if (unheard.length > 0) armRoundTimer(timers.probeEveryMs, () => probeUnheard(instance, round))
  }
  /** Round messages received while out of the group, replayed after a Join. */
  const joinReplay = new JoinReplay()
  const compact = (config.roundValues ?? DEFAULT_ROUND_VALUES) === "refs" ? compactRound : wholeRound
  const resolver = new RoundResolver(
    {
      request: (to, instance, refs) =>
        io.send(to, encodeWire(config.group, config.self, { _tag: "ValuesRequest", instance, refs }, io.wallUs())),
      deliver: (from, msg) => {
        apply({ _tag: "Receive", from, msg }, undefined)
        // After the step: the message this engine self-quit on is kept for its Join too.
        joinReplay.record({ from, msg }, isTakingPart(state))
      },
      known: (key) => state.multi?.current.values.get(key)
    },
    parts.resolveRound
  )
  // Self-addressed messages are fed back after the current step, never re-entrantly inside it.
  const loopback: Array<TobInput> = []
  let stepping = false

  /**
   * `replayed`: the instances a Join hands over. Each must reach the host as one Decided event, in order, even
   * when it delivered nothing (heartbeats only), or the host's merged order would wait for it forever.
   */
  const perform = (
    outputs: ReadonlyArray<TobOutput>,
    requestId: number | undefined,
    replayed?: { readonly from: number; readonly to: number }
  ) => {
    let decided: Array<DecidedEntry> = []
    if (replayed !== undefined) {
      for (let i = replayed.from; i < replayed.to; i++) decided.push(decidedEntry(i))
    }
    const flush = () => {
      for (const d of decided) {
        const now = io.nowMs()
        io.emit({
          _tag: "Decided",
          instance: d.instance,
          rounds: d.rounds,
          decidedSetSize: d.size,
          suspects: d.suspects,
          values: d.values.map(ownPayload),
          elapsedMs: now - instanceStartMs,
          roundStartsAgoMs: (roundStarts.get(d.instance) ?? []).map((t) => now - t)
        })
        roundStarts.delete(d.instance)
        instanceStartMs = now
      }
      decided = []
    }
    for (const o of outputs) {
      switch (o._tag) {
        case "Send": {
          const msg = o.msg
          if (msg._tag === "Round") resolver.remember(msg.instance, msg.values)
          const wire = msg._tag === "Round" ? { ...compact(msg), _tag: "Round" as const } : msg
          const bytes = encodeWire(config.group, config.self, wire, io.wallUs())
          if (io.sendToAll !== undefined && toEveryPeer(o.to, o.msg)) {
            io.sendToAll(bytes)
            break
          }
          for (const to of o.to) {
            if (to === config.self) loopback.push({ _tag: "Receive", from: config.self, msg: o.msg })
            else io.send(to, bytes)
          }
          break
        }
        case "SetTimer": {
          for (const cancel of roundTimers) cancel()
          roundTimers = []
          const now = io.nowMs()
          if (lastRoundStartMs !== undefined) roundTime.record(now - lastRoundStartMs)
          // Round 0 is the host-turnaround gap before an instance opens, not a round.
          lastRoundStartMs = o.round === 0 ? undefined : now
          const starts = roundStarts.get(o.instance) ?? []
          if (starts.length < o.round) roundStarts.set(o.instance, [...starts, now])
          const deadline = roundTimerDeadline(timers, o, now, lastTimer)
          lastTimer = { instance: o.instance, deadline }
          const timeout = () => apply({ _tag: "RoundTimeout", instance: o.instance, round: o.round }, undefined)
          const expire = (graces: number, deadlineMs: number) => () => {
            const firedMs = io.nowMs()
            const expiry = {
              round: o.round,
              armedMs: now,
              deadlineMs,
              firedMs,
              lastHeardMs,
              graces,
              wouldQuit: wouldQuit(o.instance, o.round)
            }
            if (expiryAction(timers, expiry) === "grace") {
              armRoundTimer(timers.stallGraceMs, expire(graces + 1, firedMs + timers.stallGraceMs))
            } else timeout()
          }
          armRoundTimer(Math.max(0, deadline - now), expire(0, deadline))
          if (probe !== undefined && o.round > 0) {
            armRoundTimer(timers.probeEveryMs, () => probeUnheard(o.instance, o.round))
          }
          break
        }
        case "Learned":
          // Delivered as a learner: reported like a decision (the host's merged order needs every instance),
          // but not counted as one this engine decided in rounds.
          decided.push(decidedEntry(o.instance, { size: o.decidedSetSize }))
          break
        case "Rejoined":
          flush()
          io.emit({ _tag: "Rejoined", instance: o.instance })
          break
        case "Decide":
          instancesDecided++
          roundsDecided += o.round
          decided.push(decidedEntry(o.instance, { rounds: o.round, size: o.values.length, suspects: o.suspects }))
          break
        case "Deliver": {
          // A Join replays transferred decisions as deliveries without a Decide: group them the same way.
          let target = decided.find((d) => d.instance === o.instance)
          if (target === undefined) {
            target = decidedEntry(o.instance)
            decided.push(target)
          }
          target.values.push(o.value)
          break
        }
        case "Queued":
          if (requestId !== undefined) {
            io.emit({ _tag: "Queued", requestId, proposer: o.value.proposer, seq: o.value.seq })
          }
          break
        case "Rejected":
          if (requestId !== undefined) io.emit({ _tag: "Rejected", requestId, reason: o.reason })
          break
        case "Crash": {
          crashes++
          roundStarts.clear()
          flush()
          const quit = state.quit?.instance === o.instance ? state.quit : undefined
          io.emit({
            _tag: "Crashed",
            instance: o.instance,
            attempt: quit?.attempt ?? 0,
            entered: quit?.entered ?? false,
            reason: o.reason
          })
          break
        }
        case "Left":
          flush()
          io.emit({ _tag: "Left", instance: o.instance })
          break
        case "Started":
          if (o.attempt > 0) {
            flush()
            io.emit({ _tag: "Attempt", instance: o.instance, attempt: o.attempt })
          }
          break
      }
    }
    flush()
  }

  /**
   * One core transition. The core throws only when an input breaks one of its preconditions (e.g. a Join
   * without the decisions it needs): the state is unchanged (the core is pure), the engine reports a crash
   * and the host rejoins, instead of the engine thread dying.
   */
  const step = (input: TobInput, requestId: number | undefined) => {
    const replayed =
      input._tag === "Join"
        ? {
            from: Math.max(state.nextDeliverInstance, input.snapshot?.instance ?? 0),
            to: input.startInstance
          }
        : undefined
    let result: ReturnType<typeof stepTob>
    try {
      result = stepCore(state, input)
    } catch (error) {
      crashes++
      io.emit({
        _tag: "Crashed",
        instance: state.nextDeliverInstance,
        attempt: 0,
        entered: false,
        reason: `core refused ${input._tag}: ${(error as Error).message}`
      })
      return
    }
    state = result.state
    perform(result.out, requestId, replayed)
  }

  const apply = (input: TobInput, requestId: number | undefined) => {
    if (stepping) {
      loopback.push(input)
      return
    }
    stepping = true
    try {
      step(input, requestId)
      while (loopback.length > 0) step(loopback.shift()!, undefined)
    } finally {
      stepping = false
    }
  }

  const stats = (): EngineStats => ({
    instancesDecided,
    roundsDecided,
    dropped,
    crashes,
    goneReports,
    pending: state.pending.length,
    heldForValues: resolver.heldTotal,
    heldForValuesDropped: resolver.dropped,
    interactionLatencyMs: interaction.summary(),
    roundTimeMs: roundTime.summary(),
    schedule: scheduleOf(state),
    phase: state.phase,
    nextDeliverInstance: state.nextDeliverInstance
  })

  return {
    onWire: (bytes) => {
      const decoded = decodeWire(config.group, bytes)
      if (decoded._tag === "Invalid") {
        dropped++
        io.emit({ _tag: "Dropped", reason: decoded.reason })
        return
      }
      lastHeardMs = io.nowMs()
      interaction.record(Math.max(0, (io.wallUs() - decoded.sentAtUs) / 1000))
      const { from, msg } = decoded
      switch (msg._tag) {
        case "Round":
          return resolver.onRound(from, msg)
        case "ValuesRequest": {
          const values = resolver.answer(msg.refs)
          if (values.length === 0) return
          const reply = { _tag: "Values", instance: msg.instance, values } as const
          return io.send(from, encodeWire(config.group, config.self, reply, io.wallUs()))
        }
        case "Values":
          return resolver.onValues(msg.instance, msg.values)
        default:
          return apply({ _tag: "Receive", from, msg }, undefined)
      }
    },
    onCommand: (command) => {
      switch (command._tag) {
        case "Broadcast":
          return apply({ _tag: "Broadcast", payload: command.payload }, command.requestId)
        case "ProposeMembership":
          return apply({ _tag: "ProposeMembership", members: command.members }, command.requestId)
        case "SyncStart":
          return apply({ _tag: "SyncStart" }, undefined)
        case "Join": {
          // The engine rejoined by itself as a learner (core/learner.ts) while the host fetched a state
          // transfer: the transfer is moot, and replaying it would report instances it never delivered.
          if (isTakingPart(state)) return
          instanceStartMs = io.nowMs()
          roundStarts.clear()
          const join = {
            _tag: "Join",
            startInstance: command.startInstance,
            decisions: command.decisions,
            schedule: command.schedule,
            ...(command.attempt === undefined ? {} : { attempt: command.attempt }),
            ...(command.snapshot === undefined ? {} : { snapshot: command.snapshot })
          } as const
          apply(join, undefined)
          // The group's round-1 messages of the joined instance usually came before the catch-up: replay them,
          // then open the instance now rather than wait for a message that already came.
          const kept = joinReplay.takeFrom(command.startInstance)
          for (const { from, msg } of kept) apply({ _tag: "Receive", from, msg }, undefined)
          const current = state.multi?.current
          const startNow = command.startNow ?? true
          if (
            startNow &&
            state.phase === "running" &&
            current?.instance === command.startInstance &&
            current.round === 0
          ) {
            apply({ ...join, decisions: [], startNow: true }, undefined)
          }
          return
        }
        case "Failure":
          return apply({ _tag: "Failure", process: command.process }, undefined)
        case "ReportStats":
          return io.emit({ _tag: "Stats", stats: stats() })
      }
    },
    state: () => state
  }
}
