/**
 * Proposing client commands and read barriers, and answering the callers once their command is applied here.
 *
 * - Commands submitted in one turn of the event loop are proposed together, as one value (a KvBatch), when the
 *   turn ends or once they reach MAX_PROPOSAL_BYTES. Consensus costs per value (every engine decodes each one
 *   2(N-1) times an instance), so a burst of requests from a gRPC session costs one value, not one each.
 * - Reads wait for a read barrier proposed after they arrived (read-barrier.ts).
 * - A reconfigure waits for its membership values, matched by identity (engine and seq, this incarnation).
 * - Until the replica serves (rejoin.ts: started the group, or joined and caught up), every call is answered
 *   UNAVAILABLE: nothing is proposed for it.
 *
 * Callbacks, not Effects: this is once per client request (the caller waits on its own Effect or session).
 */
import { HandlerError } from "@reef/kernel"
import type { NicEngine, ProposalRef } from "@reef/nic"
import { ErrorCode, KvBatch, type KvCommand } from "@reef/proto"
import * as Effect from "effect/Effect"
import { type KvResult, keyValueBytes } from "./kv-state.js"
import { type BarrierState, emptyBarrierState, onBarrierApplied, onBarrierFailed, onRead } from "./read-barrier.js"

/**
 * Bound on the commands proposed as one value (their keys and values): a round-2 message carries every
 * replica's proposal and must stay well inside NATS's 1 MB payload limit at N = 9.
 */
export const MAX_PROPOSAL_BYTES = 64 * 1024

/** A command's key and value bytes (what MAX_PROPOSAL_BYTES counts), plus a little for its framing. */
const commandBytes = (op: KvCommand["op"]): number => {
  if (op === undefined || op.$case === "readBarrier") return 16
  if (op.$case === "redis") return op.value.args.reduce((sum, arg) => sum + 4 + arg.byteLength, 16)
  return 16 + keyValueBytes(op.value)
}

/** A command of this replica, applied: its result and the instance (and instance span) that decided it. */
export interface Applied<Span> {
  readonly result: KvResult
  readonly instance: number
  readonly span: Span | undefined
}

/** The point a read is answered at: right after this instance's barrier. */
export interface ReadPoint<Span> {
  readonly instance: number
  readonly span: Span | undefined
}

type ReadWaiter<Span> = (point: ReadPoint<Span> | HandlerError) => void

export const unavailable = (message: string) => new HandlerError({ code: ErrorCode.ERROR_CODE_UNAVAILABLE, message })

export const membershipKey = (ref: ProposalRef): string => `${ref.engine}/${ref.seq}`

export class Proposer<Span> {
  private nextRequest = 1
  /** Client calls waiting for their command to be applied: the result, or an error when it can never be. */
  private readonly waiting = new Map<number, (outcome: Applied<Span> | HandlerError) => void>()
  private outgoing: Array<KvCommand> = []
  private outgoingBytes = 0
  private barrier: BarrierState<ReadWaiter<Span>> = emptyBarrierState()
  /** Reconfigure calls waiting for their membership value (`membershipKey`) to be applied. */
  private readonly membershipWaiters = new Map<string, (instance: number) => void>()
  /** This process's membership values applied before their caller waited for them (a narrow race). */
  private readonly membershipApplied = new Map<string, number>()
  private serving = false

  constructor(
    /** The engine, once started. */
    private readonly engine: () => NicEngine | undefined,
    /** Why calls are refused until the replica serves. */
    private readonly notServing: () => HandlerError,
    private readonly log: (message: string) => void,
    /** Told how long each request took from its arrival to its answer (metrics: replica-telemetry.ts). */
    private readonly onAnswered: (operation: string, ms: number) => void = () => {}
  ) {}

  /** From now on calls are proposed (see rejoin.ts: "ready means ready"). */
  serve(): void {
    this.serving = true
  }

  get isServing(): boolean {
    return this.serving
  }

  /** Calls waiting for their command to be applied. */
  get waitingCount(): number {
    return this.waiting.size
  }

  /**
   * Queues a command for the next proposal. `onOutcome` gets its result once it is applied here (this
   * replica's answer), or the reason it never will be. Returns a function that forgets the caller.
   */
  submit(op: KvCommand["op"], onOutcome: (outcome: Applied<Span> | HandlerError) => void): () => void {
    if (!this.serving) {
      onOutcome(this.notServing())
      return () => {}
    }
    const request = this.nextRequest++
    const arrivedMs = performance.now()
    this.waiting.set(request, (outcome) => {
      this.onAnswered(op?.$case ?? "", performance.now() - arrivedMs)
      onOutcome(outcome)
    })
    if (this.outgoing.length === 0) setImmediate(this.proposeOutgoing)
    this.outgoing.push({ request, op })
    this.outgoingBytes += commandBytes(op)
    if (this.outgoingBytes >= MAX_PROPOSAL_BYTES) this.proposeOutgoing()
    return () => this.waiting.delete(request)
  }

  /** Proposes a command and waits until it is applied here. */
  submitEffect(op: KvCommand["op"]): Effect.Effect<Applied<Span>, HandlerError> {
    return Effect.async<Applied<Span>, HandlerError>((resume) => {
      const forget = this.submit(op, (outcome) =>
        resume(outcome instanceof HandlerError ? Effect.fail(outcome) : Effect.succeed(outcome))
      )
      return Effect.sync(forget)
    })
  }

  /** Calls `onPoint` once a barrier proposed after this call is applied: the state then reflects every earlier write. */
  awaitReadPoint(onPoint: ReadWaiter<Span>): void {
    if (!this.serving) {
      onPoint(this.notServing())
      return
    }
    const arrivedMs = performance.now()
    const step = onRead(this.barrier, (point: ReadPoint<Span> | HandlerError) => {
      this.onAnswered("get", performance.now() - arrivedMs)
      onPoint(point)
    })
    this.barrier = step.state
    if (step.propose !== undefined) this.proposeBarrier(step.propose)
  }

  readPoint(): Effect.Effect<ReadPoint<Span>, HandlerError> {
    return Effect.async<ReadPoint<Span>, HandlerError>((resume) =>
      this.awaitReadPoint((point) => resume(point instanceof HandlerError ? Effect.fail(point) : Effect.succeed(point)))
    )
  }

  /** One of this incarnation's commands was applied (applier.ts). */
  onApplied(command: KvCommand, result: KvResult, instance: number, span: Span | undefined): void {
    if (result._tag === "ReadBarrier") {
      const step = onBarrierApplied(this.barrier, command.request)
      this.barrier = step.state
      for (const answer of step.answer) answer({ instance, span })
      if (step.propose !== undefined) this.proposeBarrier(step.propose)
      return
    }
    const waiter = this.waiting.get(command.request)
    this.waiting.delete(command.request)
    waiter?.({ result, instance, span })
  }

  /** One of this incarnation's membership values was applied. */
  onMembershipApplied(ref: ProposalRef, instance: number): void {
    const key = membershipKey(ref)
    const waiter = this.membershipWaiters.get(key)
    this.membershipWaiters.delete(key)
    if (waiter === undefined) this.membershipApplied.set(key, instance)
    else waiter(instance)
  }

  /** The instance whose decision applied this replica's membership value `ref`. */
  awaitMembership(ref: ProposalRef): Effect.Effect<number> {
    const key = membershipKey(ref)
    return Effect.async<number>((resume) => {
      const applied = this.membershipApplied.get(key)
      this.membershipApplied.delete(key)
      if (applied !== undefined) return resume(Effect.succeed(applied))
      this.membershipWaiters.set(key, (instance) => resume(Effect.succeed(instance)))
      return Effect.sync(() => this.membershipWaiters.delete(key))
    })
  }

  /**
   * Every call waiting here gets `error`: the state jumped (a snapshot restore) past instances that may have
   * decided them, so their outcome is unknown. Their values may still be decided later; nobody waits for
   * them any more, and a barrier given up on answers nothing (read-barrier.ts).
   */
  failWaiting(error: HandlerError): void {
    const waiters = [...this.waiting.values()]
    this.waiting.clear()
    for (const waiter of waiters) waiter(error)
    this.failBarrier()
  }

  private readonly proposeOutgoing = () => {
    const commands = this.outgoing
    this.outgoing = []
    this.outgoingBytes = 0
    if (commands.length === 0) return
    this.propose(KvBatch.encode({ commands }).finish(), (reason) => {
      for (const command of commands) {
        const waiter = this.waiting.get(command.request)
        this.waiting.delete(command.request)
        waiter?.(new HandlerError({ code: ErrorCode.ERROR_CODE_OVERLOADED, message: reason }))
      }
    })
  }

  /** A barrier's request id is its id (read-barrier.ts): only the one in flight answers reads. */
  private proposeBarrier(id: number): void {
    const payload = KvBatch.encode({ commands: [{ request: id, op: { $case: "readBarrier", value: {} } }] }).finish()
    this.propose(payload, (reason) => {
      this.log(`read barrier not proposed: ${reason}`)
      this.failBarrier()
    })
  }

  private failBarrier(): void {
    const failed = onBarrierFailed(this.barrier)
    this.barrier = failed.state
    const error = unavailable("read barrier could not be proposed")
    for (const read of failed.fail) read(error)
  }

  /** Hands a value to the engine; `onRejected` when it cannot take it (no fiber per write: a hot path). */
  private propose(payload: Uint8Array, onRejected: (reason: string) => void): void {
    const engine = this.engine()
    if (engine === undefined) onRejected("engine not started yet")
    else engine.propose(payload, onRejected)
  }
}
