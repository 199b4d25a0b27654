/**
 * Seeded simulation of replica processes running the real shell code, as TigerBeetle's VOPR runs the real
 * replica: each process is the engine loop (engine-loop.ts, wire bytes, stall grace, gone-peer probes,
 * JoinReplay) stepped by the virtual clock, and a host that applies its decisions in order and (re)joins the
 * group through the rejoin core (core/rejoin.ts) with a catch-up server like the replica's: a peer answers
 * after its next decision, with the decisions the asker misses, or with its state when its log does not
 * reach back that far.
 *
 * Faults: kill -9 (the process and its connection are gone at once) and restart as a new incarnation that
 * knows nothing, SIGSTOP/SIGCONT of one process or of the whole machine (every event for it waits), network
 * partitions that make every engine self-quit (the collapsed-group rule), asynchrony with a transport that
 * reports live peers gone. Checked at every applied instance, across incarnations: agreement (every
 * incarnation applies the same values at an instance: a restarted member never decides differently), total
 * order (each incarnation applies consecutive instances), integrity (no value twice, none never broadcast),
 * a snapshot is the state it claims; ready means ready (an incarnation serves only once it applied every
 * instance before the one it joined at). In synchronous runs, once faults stop: every process is up,
 * running and serving, and everything broadcast early enough was applied (validity).
 */

import { type DeliveredIndex, emptyDeliveredIndex, markDelivered } from "../core/delivered-index.js"
import type { MembershipSchedule } from "../core/membership.js"
import { membersAt } from "../core/membership.js"
import { thresholdOf } from "../core/popuc-instance.js"
import {
  createRejoin,
  isRunning,
  mayInstallSnapshot,
  type PeerAnswer,
  peerStatus,
  type RejoinInput,
  type RejoinOutput,
  type RejoinState,
  type RejoinStep,
  stepRejoin
} from "../core/rejoin.js"
import type { RoundTimerConfig } from "../core/round-timer.js"
import { roundPeriodMs } from "../core/round-timer.js"
import {
  type DecidedInstance,
  isTakingPart,
  scheduleOf,
  type TobInput,
  type TobState,
  type TobStep
} from "../core/tob.js"
import type { ProcessId, Value } from "../core/types.js"
import { createEngineLoop, type EngineEvent, type EngineLoop, type EngineLoopParts } from "../engine-loop.js"
import type { OnTimerExpiry } from "../engine-timers.js"
import type { Violation } from "./decision-checker.js"
import { EventQueue } from "./event-queue.js"
import { CORRECT, Network, type ProcessFaults, type TimingKind } from "./network.js"
import type { Prng } from "./prng.js"
import { type RunReport, TraceRing } from "./report.js"
import { ShellChecker } from "./shell-checker.js"
import { clockRate, drawGroup, SIM_PERIOD_US, SIM_ROUND_TIMER, timingModel } from "./sim-config.js"

export const SHELL_SCENARIOS = ["shell-crash-restart", "shell-stall", "shell-partition", "shell-async"] as const
export type ShellScenario = (typeof SHELL_SCENARIOS)[number]

const P = SIM_PERIOD_US
const PERIOD_MS = roundPeriodMs(SIM_ROUND_TIMER)
const GROUP = "sim"
/** The replica's catch-up server and its asks, in round periods (its real 5 s and 8 s are hundreds of rounds). */
const NEXT_DECISION_WAIT_US = 20 * P
const ASK_TIMEOUT_US = 30 * P
/** A host's command reaches its engine thread (postMessage) after this long at most. */
const COMMAND_DELAY_US = P / 2

export interface ShellRunOptions {
  readonly n?: number
  /** Replacements for parts of the real code: deliberately broken variants (mutants.ts). */
  readonly stepTob?: (s: TobState, input: TobInput) => TobStep
  readonly onTimerExpiry?: OnTimerExpiry
  readonly resolveRound?: EngineLoopParts["resolveRound"]
  readonly stepRejoin?: (s: RejoinState, input: RejoinInput) => RejoinStep
}

interface Pause {
  readonly fromUs: number
  readonly untilUs: number
  /** Every process at once (the machine), or one. */
  readonly who: ProcessId | "all"
}

interface ShellPlan {
  readonly timing: TimingKind
  readonly faults: ReadonlyMap<ProcessId, ProcessFaults>
  readonly kills: ReadonlyArray<{ readonly atUs: number; readonly who: ProcessId; readonly downUs: number }>
  readonly pauses: ReadonlyArray<Pause>
  /** Decisions a host keeps for catch-ups; fewer than a restarted process missed makes it restore a snapshot. */
  readonly logLimit: number
  /** The transport reports live peers gone now and then (only where just safety is checked). */
  readonly wrongProbes: boolean
  /** Nothing but stalls of the whole machine: no engine may self-quit (the stall grace, engine-timers.ts). */
  readonly noSelfQuit: boolean
  readonly safetyOnly: boolean
  readonly endUs: number
  readonly loadEndUs: number
  readonly quietFromUs: number
}

/** What a host knows of the group: the reply to a catch-up. */
interface CatchUp {
  readonly joinInstance: number
  readonly rejoining: boolean
  readonly attempt: number
  readonly schedule: MembershipSchedule
  readonly decisions: ReadonlyArray<DecidedInstance> | undefined
  readonly snapshot: HostState | undefined
}

/** A host's applied state: what a snapshot carries. */
interface HostState {
  /** Every instance before this one is applied. */
  readonly nextInstance: number
  readonly hash: number
  readonly delivered: DeliveredIndex
}

/** One process start: engine loop, rejoin core, applied state. */
interface Host {
  readonly id: ProcessId
  readonly life: number
  readonly incarnation: string
  engine: EngineLoop
  rejoin: RejoinState
  applied: HostState
  readonly log: Map<number, ReadonlyArray<Value>>
  /** The instance the last Join told the engine to join at (ready means ready). */
  joinedAt: number
  /** The ask under way: its answers so far. */
  ask: { readonly id: number; readonly answers: Map<ProcessId, CatchUp> } | undefined
  /** The answers of the last completed ask: what a Join or Restore output refers to. */
  replies: ReadonlyMap<ProcessId, CatchUp>
  /** Catch-up answers waiting for this host's next decision. */
  waiters: Array<() => void>
  /** The delivered index of the snapshot installed last. */
  restoredDelivered: DeliveredIndex | undefined
}

interface Proc {
  readonly id: ProcessId
  readonly rate: number
  readonly faults: ProcessFaults
  host: Host | undefined
  lives: number
  pausedUntilUs: number
}

type SimEvent =
  | { readonly _tag: "Start" }
  | { readonly _tag: "Wire"; readonly bytes: Uint8Array }
  /** A timer, a delayed command or a probe answer of one incarnation: dropped if it died meanwhile. */
  | { readonly _tag: "Run"; readonly life: number; readonly what: string; readonly run: (host: Host) => void }
  | {
      readonly _tag: "Ask"
      readonly from: ProcessId
      readonly life: number
      readonly ask: number
      readonly fromInstance: number
    }
  | {
      readonly _tag: "Answer"
      readonly from: ProcessId
      readonly life: number
      readonly ask: number
      readonly reply: CatchUp
    }
  | { readonly _tag: "Kill"; readonly downUs: number }
  | { readonly _tag: "Restart" }

const hashStep = (hash: number, key: string): number => {
  let h = hash ^ 0x9e3779b9
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193)
  return h >>> 0
}

const omissionWindow = (fromUs: number, untilUs: number, p: number): ProcessFaults => ({
  ...CORRECT,
  sendOmitP: p,
  recvOmitP: p,
  omitFromUs: fromUs,
  omitUntilUs: untilUs
})

const planFor = (scenario: ShellScenario, rng: Prng, members: ReadonlyArray<ProcessId>): ShellPlan => {
  const t = thresholdOf(members.length)
  const base = {
    timing: "sync" as TimingKind,
    faults: new Map<ProcessId, ProcessFaults>(),
    kills: [] as Array<ShellPlan["kills"][number]>,
    pauses: [] as Array<Pause>,
    logLimit: rng.pick([4, 64, 1_000_000]),
    wrongProbes: false,
    noSelfQuit: false,
    safetyOnly: false,
    endUs: 160 * P,
    loadEndUs: 40 * P,
    quietFromUs: 50 * P
  }
  const kill = (who: ProcessId, fromUs: number, untilUs: number) =>
    base.kills.push({ atUs: rng.int(fromUs, untilUs), who, downUs: rng.int(P, 10 * P) })
  switch (scenario) {
    case "shell-crash-restart":
      // Up to t at once, some killed again after their restart, sometimes one before the group started; and
      // sometimes one process stopped (SIGSTOP) for a while.
      for (const who of rng.sample(members, rng.int(1, t))) {
        kill(who, rng.chance(0.15) ? 0 : 3 * P, 25 * P)
        if (rng.chance(0.4)) kill(who, 28 * P, 38 * P)
      }
      if (rng.chance(0.5)) {
        const fromUs = rng.int(3 * P, 35 * P)
        base.pauses.push({ fromUs, untilUs: fromUs + rng.int(P / 2, 8 * P), who: rng.pick(members) })
      }
      return base
    case "shell-stall":
      // The whole machine stopped now and then (a VM paused, the host swapping): everyone resumes with a backlog.
      for (let i = rng.int(1, 4); i > 0; i--) {
        const fromUs = rng.int(3 * P, 35 * P)
        base.pauses.push({ fromUs, untilUs: fromUs + rng.int(P / 2, 8 * P), who: "all" })
      }
      return { ...base, noSelfQuit: true }
    case "shell-partition": {
      // Every process cut off from every other for a while: each engine self-quits, and the group, collapsed,
      // must restart from the most advanced member.
      const fromUs = rng.int(5 * P, 20 * P)
      const untilUs = fromUs + rng.int(6 * P, 20 * P)
      const everyone = rng.chance(0.6)
      for (const p of everyone ? members : rng.sample(members, rng.int(1, t))) {
        base.faults.set(p, omissionWindow(fromUs, untilUs, rng.pick([1, 0.8])))
      }
      return base
    }
    case "shell-async":
      // At most t processes ever killed: a restart knows nothing, so the group's state lives in the others.
      for (const who of rng.sample(members, rng.int(0, t))) {
        kill(who, 0, 30 * P)
        if (rng.chance(0.3)) kill(who, 32 * P, 45 * P)
      }
      for (let i = rng.int(0, 3); i > 0; i--) {
        const fromUs = rng.int(0, 30 * P)
        base.pauses.push({
          fromUs,
          untilUs: fromUs + rng.int(P, 10 * P),
          who: rng.chance(0.3) ? "all" : rng.pick(members)
        })
      }
      return { ...base, timing: "async", wrongProbes: true, safetyOnly: true, endUs: 60 * P }
  }
}

export const runShellSim = (scenario: ShellScenario, seed: number, options: ShellRunOptions = {}): RunReport => {
  const { rng, n, members } = drawGroup(seed, options.n)
  const plan = planFor(scenario, rng.fork(), members)
  const maxBatchBytes = rng.pick([256, 4096])
  const closeOnAllHeard = rng.chance(0.7)
  const gapMs = rng.pick([0, SIM_ROUND_TIMER.interactionMs / 2, SIM_ROUND_TIMER.interactionMs])
  const roundTimer: RoundTimerConfig = {
    ...SIM_ROUND_TIMER,
    ...(gapMs === 0 ? {} : { instanceGapMs: gapMs }),
    ...(closeOnAllHeard ? { closeOnAllHeard } : {})
  }
  const rejoinStep = options.stepRejoin ?? stepRejoin
  const queue = new EventQueue<{ readonly to: ProcessId; readonly ev: SimEvent }>()
  const trace = new TraceRing(24)
  const checker = new ShellChecker()
  const procs = new Map<ProcessId, Proc>()
  for (const id of members) {
    procs.set(id, {
      id,
      rate: clockRate(rng, plan.timing, 0.05),
      faults: plan.faults.get(id) ?? CORRECT,
      host: undefined,
      lives: 0,
      pausedUntilUs: 0
    })
  }
  const network = new Network(
    rng.fork(),
    timingModel(plan.timing, { dropP: 0.02, slowP: 0.05 }),
    (p) => procs.get(p)!.faults
  )
  let nowUs = 0
  let violation: Violation | undefined
  let selfQuits = 0
  let joins = 0
  let learnerRejoins = 0
  let restores = 0
  let nextRequest = 1
  /** What each request asked to broadcast: a Queued event names it by request id. */
  const requests = new Map<number, Uint8Array>()

  const fail = (v: Violation | undefined) => {
    violation ??= v
  }
  const sendEvent = (from: ProcessId, to: ProcessId, ev: SimEvent) => {
    for (const at of network.arrivals(from, to, nowUs)) queue.push(at, { to, ev })
  }
  /** Runs `run` on incarnation `host` after `afterUs`, unless it died meanwhile. */
  const later = (host: Host, afterUs: number, what: string, run: (h: Host) => void) =>
    queue.push(nowUs + Math.max(0, Math.round(afterUs)), {
      to: host.id,
      ev: { _tag: "Run", life: host.life, what, run }
    })

  const catchUpOf = (host: Host, fromInstance: number): CatchUp => {
    const last = host.applied.nextInstance - 1
    const status = peerStatus(host.rejoin)
    const common = {
      joinInstance: last + 1,
      rejoining: status.rejoining,
      attempt: status.joinInstance === last + 1 ? status.attempt : -1,
      schedule: scheduleOf(host.engine.state())
    }
    const decisions: Array<DecidedInstance> = []
    for (let instance = Math.max(1, fromInstance); instance <= last; instance++) {
      const values = host.log.get(instance)
      if (values === undefined) return { ...common, decisions: undefined, snapshot: host.applied }
      decisions.push({ instance, values })
    }
    return { ...common, decisions, snapshot: undefined }
  }

  const answerOf = (host: Host, peer: ProcessId, reply: CatchUp): PeerAnswer => ({
    peer,
    joinInstance: reply.joinInstance,
    rejoining: reply.rejoining,
    attempt: reply.attempt,
    snapshot: reply.decisions === undefined,
    member: membersAt(reply.schedule, reply.joinInstance).includes(host.id)
  })

  const completeAsk = (host: Host) => {
    const ask = host.ask
    if (ask === undefined) return
    host.ask = undefined
    host.replies = ask.answers
    const answers = [...ask.answers].map(([peer, reply]) => answerOf(host, peer, reply))
    stepHost(host, { _tag: "Answers", ask: ask.id, nowMs: localMs(host), answers })
  }

  const localMs = (host: Host): number => nowUs / (1000 * procs.get(host.id)!.rate)

  const perform = (host: Host, o: RejoinOutput) => {
    switch (o._tag) {
      case "Ask": {
        const peers = host.rejoin.members.filter((m) => m !== host.id)
        host.ask = { id: o.ask, answers: new Map() }
        for (const peer of peers) {
          sendEvent(host.id, peer, {
            _tag: "Ask",
            from: host.id,
            life: host.life,
            ask: o.ask,
            fromInstance: o.fromInstance
          })
        }
        later(host, ASK_TIMEOUT_US, "ask timeout", (h) => {
          if (h.ask?.id === o.ask) completeAsk(h)
        })
        if (peers.length === 0) completeAsk(host)
        return
      }
      case "SetTimer":
        later(host, o.afterMs * 1000 * procs.get(host.id)!.rate, "rejoin timer", (h) =>
          stepHost(h, { _tag: "Timer", nowMs: localMs(h), id: o.id })
        )
        return
      case "SyncStart":
        later(host, rng.int(0, COMMAND_DELAY_US), "sync-start", (h) => h.engine.onCommand({ _tag: "SyncStart" }))
        return
      case "Restore": {
        const reply = host.replies.get(o.peer)
        const snapshot = reply?.snapshot
        later(host, rng.int(P / 4, 2 * P), "restore", (h) => {
          const peer = procs.get(o.peer)!
          if (snapshot === undefined || peer.host === undefined || rng.chance(0.1)) {
            stepHost(h, { _tag: "RestoreFailed", nowMs: localMs(h), reason: `${o.peer} did not send its snapshot` })
            return
          }
          if (!mayInstallSnapshot(h.rejoin, snapshot.nextInstance)) {
            const reason = `${o.peer}'s snapshot at ${snapshot.nextInstance} is not ahead of what is applied`
            stepHost(h, { _tag: "RestoreFailed", nowMs: localMs(h), reason })
            return
          }
          restores++
          h.applied = snapshot
          h.log.clear()
          h.restoredDelivered = snapshot.delivered
          fail(checker.onRestored(h.incarnation, snapshot.nextInstance, snapshot.hash))
          stepHost(h, { _tag: "Restored", nowMs: localMs(h), instance: snapshot.nextInstance })
        })
        return
      }
      case "Join": {
        const reply = host.replies.get(o.peer)!
        joins++
        host.joinedAt = o.joinInstance
        const snapshot =
          o.snapshotAt === undefined || host.restoredDelivered === undefined
            ? undefined
            : { instance: o.snapshotAt, delivered: host.restoredDelivered }
        later(host, rng.int(0, COMMAND_DELAY_US), "join", (h) =>
          h.engine.onCommand({
            _tag: "Join",
            startInstance: o.joinInstance,
            decisions: reply.decisions ?? [],
            schedule: reply.schedule,
            startNow: o.startNow,
            attempt: o.attempt,
            ...(snapshot === undefined ? {} : { snapshot })
          })
        )
        return
      }
      case "Serve":
        fail(checker.onServe(host.incarnation, host.applied.nextInstance, host.joinedAt))
        return
      case "Log":
        return
    }
  }

  const stepHost = (host: Host, input: RejoinInput) => {
    const result = rejoinStep(host.rejoin, input)
    host.rejoin = result.state
    for (const o of result.out) perform(host, o)
  }

  const apply = (host: Host, instance: number, values: ReadonlyArray<Value>) => {
    // A replayed instance the host applied already: the aggregator drops it.
    if (instance < host.applied.nextInstance) return
    if (instance > host.applied.nextInstance) {
      fail({
        property: "host order",
        detail: `${host.incarnation} was handed instance ${instance} before ${host.applied.nextInstance}: it would wait forever`
      })
      return
    }
    fail(checker.onApplied(host.incarnation, instance, values))
    let { hash, delivered } = host.applied
    for (const v of values) {
      hash = hashStep(hash, `${v.proposer}/${v.incarnation}/${v.seq}`)
      delivered = markDelivered(delivered, v)
    }
    host.applied = { nextInstance: instance + 1, hash, delivered }
    checker.recordHash(instance + 1, hash)
    host.log.set(instance, values)
    host.log.delete(instance - plan.logLimit)
    stepHost(host, { _tag: "Applied", instance })
    const waiters = host.waiters
    host.waiters = []
    for (const w of waiters) w()
  }

  const onEngineEvent = (host: Host, e: EngineEvent) => {
    switch (e._tag) {
      case "Queued": {
        const payload = requests.get(e.requestId)
        requests.delete(e.requestId)
        if (payload !== undefined) checker.onQueued(host.incarnation, e.proposer, e.seq, payload, nowUs)
        return
      }
      case "Decided":
        apply(host, e.instance, e.values)
        return
      case "Crashed":
        selfQuits++
        if (plan.noSelfQuit) {
          fail({
            property: "stall grace",
            detail: `${host.incarnation} self-quit after a machine-wide stall: ${e.reason}`
          })
        }
        stepHost(host, {
          _tag: "EngineCrashed",
          nowMs: localMs(host),
          instance: e.instance,
          attempt: e.attempt,
          entered: e.entered
        })
        return
      case "Attempt":
        stepHost(host, { _tag: "EngineStarted", instance: e.instance, attempt: e.attempt })
        return
      case "Rejoined":
        learnerRejoins++
        // Taking part again from there as a learner: a Join told to the engine meanwhile was moot (ignored).
        host.joinedAt = e.instance
        stepHost(host, { _tag: "EngineRejoined", nowMs: localMs(host), instance: e.instance })
        return
      case "Dropped":
        fail({ property: "wire", detail: `${host.incarnation} dropped a round message: ${e.reason}` })
        return
      case "Rejected":
      case "Left":
      case "Stats":
        return
    }
  }

  const startHost = (proc: Proc): Host => {
    proc.lives++
    const life = proc.lives
    const incarnation = `${proc.id}#${life}`
    // The engine's I/O reaches this incarnation only: a closure of a dead one finds `proc.host` replaced.
    const alive = () => proc.host?.life === life
    let host: Host | undefined
    const engine = createEngineLoop(
      { group: GROUP, self: proc.id, incarnation, members, roundTimer, maxBatchBytes },
      {
        send: (to, bytes) => {
          if (alive()) sendEvent(proc.id, to, { _tag: "Wire", bytes })
        },
        setTimer: (afterMs, fire) => {
          if (host === undefined || !alive()) return undefined
          // Cancellable as the worker's timers are: a cancelled one still comes up in the queue, and does nothing.
          let cancelled = false
          later(host, afterMs * 1000 * proc.rate, "engine timer", () => {
            if (!cancelled) fire()
          })
          return () => {
            cancelled = true
          }
        },
        nowMs: () => nowUs / (1000 * proc.rate),
        wallUs: () => nowUs,
        emit: (e) => {
          if (host !== undefined && alive()) onEngineEvent(host, e)
        },
        probe: (peer, gone) => {
          if (host === undefined || !alive()) return
          later(host, rng.int(P / 20, P / 2), "probe", () => {
            const target = procs.get(peer)!
            const omitting = nowUs >= target.faults.omitFromUs && nowUs < target.faults.omitUntilUs
            const disconnected = target.host === undefined || (omitting && rng.chance(0.5))
            if (disconnected || (plan.wrongProbes && rng.chance(0.1))) gone()
          })
        }
      },
      {
        ...(options.stepTob ? { stepTob: options.stepTob } : {}),
        ...(options.onTimerExpiry ? { onTimerExpiry: options.onTimerExpiry } : {}),
        ...(options.resolveRound ? { resolveRound: options.resolveRound } : {})
      }
    )
    host = {
      id: proc.id,
      life,
      incarnation,
      engine,
      rejoin: createRejoin({
        self: proc.id,
        members,
        roundPeriodMs: PERIOD_MS,
        allPeersMs: 20 * PERIOD_MS,
        majorityMs: 60 * PERIOD_MS,
        askEveryMs: PERIOD_MS,
        retryMs: 2 * PERIOD_MS,
        learnMs: 8 * PERIOD_MS,
        watchdogMs: 40 * PERIOD_MS
      }),
      applied: { nextInstance: 1, hash: 0, delivered: emptyDeliveredIndex },
      log: new Map(),
      joinedAt: 0,
      ask: undefined,
      replies: new Map(),
      waiters: [],
      restoredDelivered: undefined
    }
    proc.host = host
    return host
  }

  const onAsk = (host: Host, ev: Extract<SimEvent, { _tag: "Ask" }>) => {
    const answer = () => {
      if (procs.get(host.id)!.host !== host) return
      sendEvent(host.id, ev.from, {
        _tag: "Answer",
        from: host.id,
        life: ev.life,
        ask: ev.ask,
        reply: catchUpOf(host, ev.fromInstance)
      })
    }
    // The replica's catch-up server answers after its next decision, unless nothing was decided yet or its
    // own engine is out of the group (a collapsed group must rejoin from what its members have).
    if (host.applied.nextInstance > 1 && !peerStatus(host.rejoin).rejoining) {
      let answered = false
      const once = () => {
        if (!answered) answer()
        answered = true
      }
      host.waiters.push(once)
      later(host, NEXT_DECISION_WAIT_US, "catch-up wait", once)
    } else {
      answer()
    }
  }

  const handle = (proc: Proc, ev: SimEvent) => {
    if (ev._tag === "Restart") {
      if (proc.host !== undefined) return
      const host = startHost(proc)
      stepHost(host, { _tag: "Start", nowMs: localMs(host) })
      return
    }
    const host = proc.host
    if (host === undefined) return
    switch (ev._tag) {
      case "Start":
        stepHost(host, { _tag: "Start", nowMs: localMs(host) })
        return
      case "Wire":
        host.engine.onWire(ev.bytes)
        return
      case "Run":
        if (ev.life === host.life) ev.run(host)
        return
      case "Ask":
        onAsk(host, ev)
        return
      case "Answer": {
        if (ev.life !== host.life || host.ask?.id !== ev.ask) return
        host.ask.answers.set(ev.from, ev.reply)
        if (host.ask.answers.size === host.rejoin.members.length - 1) completeAsk(host)
        return
      }
      case "Kill":
        checker.onKilled(host.incarnation)
        proc.host = undefined
        queue.push(nowUs + ev.downUs, { to: proc.id, ev: { _tag: "Restart" } })
        return
    }
  }

  // The scenario's schedule.
  for (const id of members) {
    startHost(procs.get(id)!)
    queue.push(rng.int(0, 2000), { to: id, ev: { _tag: "Start" } })
  }
  for (const k of plan.kills) queue.push(k.atUs, { to: k.who, ev: { _tag: "Kill", downUs: k.downUs } })
  const clientTimes = [...Array(rng.int(2 * n, 6 * n)).keys()]
    .map(() => rng.int(0, plan.loadEndUs))
    .sort((a, b) => a - b)
  let nextClient = 0
  /** From the quiet time on, the run stops as soon as everything settled (checked every two rounds). */
  let settleCheckUs = plan.quietFromUs

  const pausedUntil = (proc: Proc, atUs: number): number => {
    let until = proc.pausedUntilUs
    for (const p of plan.pauses) {
      if ((p.who === "all" || p.who === proc.id) && atUs >= p.fromUs && atUs < p.untilUs)
        until = Math.max(until, p.untilUs)
    }
    return until
  }

  /** A client write goes to a host that serves (a real client retries elsewhere). */
  const clientWrite = () => {
    const serving = [...procs.values()].flatMap((p) =>
      p.host?.rejoin.serving && pausedUntil(p, nowUs) <= nowUs ? [p.host] : []
    )
    if (serving.length === 0) return
    const host = rng.pick(serving)
    const requestId = nextRequest++
    const payload = rng.bytes(rng.int(1, 120))
    requests.set(requestId, payload)
    host.engine.onCommand({ _tag: "Broadcast", requestId, payload })
  }

  /** Every process is up, running and serving, and everything broadcast early enough is applied. */
  const settled = (validityBeforeUs: number): Violation | undefined => {
    const hosts = [...procs.values()].map((p) => p.host)
    for (const [i, h] of hosts.entries()) {
      if (h === undefined) return { property: "restart", detail: `${members[i]} is not up at the end` }
      if (!isRunning(h.rejoin) || !h.rejoin.serving || !isTakingPart(h.engine.state())) {
        return {
          property: "rejoin",
          detail: `${h.incarnation} is up but not running at the end (rejoin ${h.rejoin.phase._tag}, engine ${h.engine.state().phase})`
        }
      }
    }
    const upTo = Math.min(...hosts.map((h) => h!.applied.nextInstance))
    if (checker.applied < 5) return { property: "progress", detail: `only ${checker.applied} instances applied` }
    const live = new Set(hosts.map((h) => h!.incarnation))
    return checker.checkValidity(live, validityBeforeUs, upTo)
  }

  for (let next = queue.pop(); next !== undefined && violation === undefined; next = queue.pop()) {
    const { atUs, event } = next
    if (atUs > plan.endUs) break
    while (nextClient < clientTimes.length && clientTimes[nextClient]! <= atUs) {
      nowUs = clientTimes[nextClient++]!
      clientWrite()
    }
    nowUs = atUs
    if (!plan.safetyOnly && atUs >= settleCheckUs) {
      if (settled(Number.POSITIVE_INFINITY) === undefined) break
      settleCheckUs = atUs + 2 * P
    }
    const proc = procs.get(event.to)!
    const until = pausedUntil(proc, atUs)
    if (until > atUs && event.ev._tag !== "Kill") {
      // Stopped: whatever reaches the process waits for it to run again, in the order it came.
      queue.push(until, event)
      continue
    }
    trace.add(atUs, proc.host?.incarnation ?? proc.id, event.ev._tag === "Run" ? event.ev.what : event.ev)
    handle(proc, event.ev)
  }
  if (violation === undefined && !plan.safetyOnly) violation = settled(plan.loadEndUs)

  return {
    scenario,
    seed,
    n,
    f: new Set([...plan.kills.map((k) => k.who), ...plan.faults.keys()]).size,
    violation,
    trace: violation === undefined ? [] : trace.snapshot(),
    stats: {
      decisions: checker.appliedInstances,
      maxDecisionRound: 0,
      messages: network.sent,
      droppedMessages: network.dropped,
      selfCrashes: selfQuits,
      instances: checker.applied,
      deliveries: checker.deliveries,
      rejoins: joins + restores,
      learnerRejoins,
      lostDecisions: checker.lostDecisions
    }
  }
}
