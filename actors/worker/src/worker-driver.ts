/**
 * The worker's shell around its pure core (`@reef/remora/core` worker.ts): it feeds the core what arrives
 * (tasks, lease transfers, tokens, timer ends) and carries out what the core asks for:
 *
 * - a unit of work on a virtual core: the signature check for real (node:crypto Ed25519) when the unit has one,
 *   then the unit's synthetic cost on a timer (VirtualCoreTimers);
 * - object and token requests, lease transfers, tokens: batched per destination per turn (TurnOutbox);
 * - completions and load: one WorkerReport to the coordinator per turn, and one every `reportIntervalMs` while
 *   idle (the load the coordinator's stateless router and SFS read);
 * - a `remora.lease_transfer` span on both sides of every transfer, in the trace of the consensus window of the
 *   transaction that needed it.
 *
 * Inputs are queued and stepped one at a time, never re-entrantly: an output that produces an input (a unit
 * without cost ends at once) goes to the back of the queue.
 */
import { createHash } from "node:crypto"
import { createWriteStream, type WriteStream } from "node:fs"
import type { Codec } from "@reef/kernel"
import {
  type Completion,
  EpochReport,
  ObjectRequest,
  ObjectTransfer,
  type PeekObjectReply,
  type StateDigest,
  TokenReply,
  TokenRequest,
  type Transaction,
  WorkerReport
} from "@reef/proto"
import {
  COORDINATOR_SOURCE,
  createWorker,
  executeContract,
  genesisValue,
  type PolicyName,
  SignatureVerifier,
  StateDigestSum,
  stepWorker,
  type WorkerInput,
  type WorkerOutput,
  type WorkerState,
  workerLoad
} from "@reef/remora"
import { completionToWire, nowNs, type SpanRecorder, TurnOutbox } from "@reef/remora/shell"
import { VirtualCoreTimers } from "./virtual-cores.js"

export interface WorkerOptions {
  readonly id: string
  /** Virtual cores: units of work that run at once (the emulated machine's size). */
  readonly cores: number
  readonly retryAfterMs: number
  readonly tokenTtlMs: number
  readonly symmetricPolicy: PolicyName
  /** Load report to the coordinator while nothing completes (ms). */
  readonly reportIntervalMs: number
  /** Retries and token expiry are checked this often (ms). */
  readonly tickIntervalMs: number
  readonly incarnation: string
  /**
   * A debugging aid: append every version this worker produces (seq, key, version, a hash of the value, fence
   * generation) to this file, so a run whose state differs from the reference shows which execution went wrong.
   */
  readonly auditFile?: string
}

/** The audit log's value hash: the first 16 hex digits of its SHA-256. */
export const auditHash = (value: Uint8Array): string => createHash("sha256").update(value).digest("hex").slice(0, 16)

export const defaultWorkerOptions = (id: string, incarnation: string): WorkerOptions => ({
  id,
  cores: 4,
  retryAfterMs: 2_000,
  tokenTtlMs: 60_000,
  symmetricPolicy: "round-robin",
  reportIntervalMs: 500,
  tickIntervalMs: 100,
  incarnation
})

/** How the driver reaches the network: batched tells to a worker or the coordinator (fire and forget). */
export interface WorkerIo {
  readonly tellWorker: <A>(worker: string, codec: Codec<A>, messages: ReadonlyArray<A>) => void
  readonly tellCoordinator: <A>(codec: Codec<A>, messages: ReadonlyArray<A>) => void
  readonly spans: SpanRecorder
  readonly warn: (message: string) => void
}

const versionKey = (key: string, version: number) => `${key}\u0000${version}`

/** An epoch report in messages of about 256 KiB (the bus's payload limit is 1 MiB). */
const chunkObjects = (
  objects: ReadonlyArray<{ readonly key: string; readonly version: number; readonly value: Uint8Array }>
): Array<Array<{ key: string; version: number; value: Buffer }>> => {
  const out: Array<Array<{ key: string; version: number; value: Buffer }>> = [[]]
  let size = 0
  for (const o of objects) {
    const bytes = o.key.length + o.value.byteLength + 16
    if (size + bytes > 256 * 1024 && out[out.length - 1]!.length > 0) {
      out.push([])
      size = 0
    }
    size += bytes
    out[out.length - 1]!.push({ key: o.key, version: o.version, value: Buffer.from(o.value) })
  }
  return out
}

export class WorkerDriver {
  readonly core: WorkerState<Transaction>
  private readonly inputs: Array<WorkerInput<Transaction>> = []
  private draining = false
  private readonly verifier = new SignatureVerifier()
  private readonly timers: VirtualCoreTimers
  private readonly objectRequests: TurnOutbox<ObjectRequest>
  private readonly transfers: TurnOutbox<ObjectTransfer>
  private readonly tokenRequests: TurnOutbox<TokenRequest>
  private readonly tokenReplies: TurnOutbox<TokenReply>
  private completions: Array<Completion> = []
  /** The fence generation `completions` were executed under (reports carry it). */
  private generation = 0
  /** Fences taken and epoch reports sent (role status). */
  private fences = 0
  private epochReports = 0
  private statelessDoneUs = 0
  private statelessDone = 0
  /** Stateful parts completed and lease transfers received since start (the role status `reef status` shows). */
  private executedTotal = 0
  private leasesIn = 0
  private reportScheduled = false
  private readonly ticker: ReturnType<typeof setInterval>
  private readonly reporter: ReturnType<typeof setInterval>
  /** Tracing only: when each lease transfer started, on the requesting and on the sending side. */
  private readonly fetchStarted = new Map<string, { readonly at: bigint; readonly from: string }>()
  private readonly requestSeen = new Map<string, bigint>()

  constructor(
    readonly options: WorkerOptions,
    private readonly io: WorkerIo
  ) {
    this.core = createWorker<Transaction>({
      self: options.id,
      incarnation: options.incarnation,
      cores: options.cores,
      retryAfterMs: options.retryAfterMs,
      tokenTtlMs: options.tokenTtlMs,
      genesis: genesisValue,
      execute: (tx, read) => {
        const outcome = executeContract(tx, read)
        return outcome.status === "executed"
          ? { status: "executed", writes: outcome.writes, detail: "" }
          : { status: "aborted", detail: outcome.detail }
      },
      symmetricPolicy: options.symmetricPolicy,
      observe: options.auditFile !== undefined
    })
    if (options.auditFile !== undefined) this.audit = createWriteStream(options.auditFile, { flags: "a" })
    this.timers = new VirtualCoreTimers((unit, valid) => this.feed({ _tag: "UnitDone", unit, valid }))
    const toWorker =
      <A>(codec: Codec<A>) =>
      (worker: string, messages: Array<A>) =>
        io.tellWorker(worker, codec, messages)
    this.objectRequests = new TurnOutbox((to, messages) =>
      to === COORDINATOR_SOURCE
        ? io.tellCoordinator(ObjectRequest, messages)
        : io.tellWorker(to, ObjectRequest, messages)
    )
    this.transfers = new TurnOutbox(toWorker(ObjectTransfer))
    this.tokenRequests = new TurnOutbox(toWorker(TokenRequest))
    this.tokenReplies = new TurnOutbox(toWorker(TokenReply))
    this.ticker = setInterval(() => this.feed({ _tag: "Tick", nowMs: performance.now() }), options.tickIntervalMs)
    this.reporter = setInterval(() => this.scheduleReport(), options.reportIntervalMs)
    this.ticker.unref()
    this.reporter.unref()
  }

  private audit: WriteStream | undefined

  close(): void {
    this.audit?.end()
    clearInterval(this.ticker)
    clearInterval(this.reporter)
    this.timers.close()
  }

  /** Steps the core with `input` (and whatever it leads to), then carries out the outputs. */
  feed(input: WorkerInput<Transaction>): void {
    this.inputs.push(input)
    if (this.draining) return
    this.draining = true
    try {
      for (let next = this.inputs.shift(); next !== undefined; next = this.inputs.shift()) {
        this.observeInput(next)
        if (this.audit !== undefined && next._tag === "ObjectArrived" && next.value !== undefined) {
          // Where each input came from: a peer (in which generation) or the coordinator.
          this.audit.write(
            `A ${next.from} ${next.key} ${next.version} ${auditHash(next.value)} ${next.generation ?? "-"} ` +
              `${this.core.generation} ${this.options.incarnation}\n`
          )
        }
        if (next._tag === "ObjectArrived" && next.value !== undefined && next.from !== COORDINATOR_SOURCE)
          this.leasesIn++
        for (const output of stepWorker(this.core, next)) this.perform(output)
      }
    } finally {
      this.draining = false
    }
  }

  peek(key: string): PeekObjectReply {
    const held = this.core.objects.get(key)
    return held === undefined
      ? { held: false, version: 0, value: Buffer.alloc(0) }
      : { held: true, version: held.version, value: Buffer.from(held.value) }
  }

  /** What the worker's heartbeats carry for `reef status`. */
  status(): Record<string, string> {
    const load = workerLoad(this.core)
    return {
      executed: String(this.executedTotal),
      objects: String(this.core.objects.size),
      "leases in": String(this.leasesIn),
      generation: String(this.generation),
      fences: String(this.fences),
      "epoch reports": String(this.epochReports),
      busy: `${load.busyCores}/${this.options.cores}`,
      waiting: String(load.waiting + load.queued)
    }
  }

  /** Digest of every object version held here (the coordinator adds the workers' digests up). */
  digest(): StateDigest {
    const sum = new StateDigestSum()
    for (const [key, held] of this.core.objects) sum.add(key, held.version, held.value)
    return { ...sum.toProto(), generation: this.core.generation }
  }

  private perform(o: WorkerOutput<Transaction>): void {
    switch (o._tag) {
      case "StartUnit": {
        const tx = o.verify
        const valid = tx === undefined ? true : this.verifier.verify(tx.publicKey, tx.body, tx.signature)
        if (o.costUs <= 0) this.inputs.push({ _tag: "UnitDone", unit: o.unit, valid })
        else this.timers.start(o.unit, o.costUs, valid)
        break
      }
      case "RequestObject":
        if (this.io.spans.enabled && o.trace !== "") {
          const vk = versionKey(o.key, o.version)
          if (!this.fetchStarted.has(vk)) this.fetchStarted.set(vk, { at: nowNs(), from: o.to })
        }
        this.objectRequests.push(o.to, {
          key: o.key,
          version: o.version,
          requester: this.options.id,
          traceparent: o.trace,
          generation: this.core.generation
        })
        break
      case "SendObject":
        if (o.value !== undefined) this.recordTransferOut(o.key, o.version, o.to, o.trace)
        this.transfers.push(o.to, {
          key: o.key,
          version: o.version,
          value:
            o.value === undefined
              ? Buffer.alloc(0)
              : Buffer.from(o.value.buffer, o.value.byteOffset, o.value.byteLength),
          from: this.options.id,
          missing: o.value === undefined,
          traceparent: o.trace,
          generation: o.generation
        })
        break
      case "RequestToken":
        this.tokenRequests.push(o.to, { txId: o.txId, requester: this.options.id })
        break
      case "SendToken":
        this.tokenReplies.push(o.to, { txId: o.txId, valid: o.valid, from: this.options.id })
        break
      case "Completed":
        this.executedTotal++
        this.completions.push(completionToWire(o))
        this.scheduleReport()
        break
      case "StatelessDone":
        this.statelessDone++
        this.statelessDoneUs += Math.max(1, o.costUs)
        this.scheduleReport()
        break
      case "Fenced":
        // Completions of the old generation go out under it (the coordinator ignores them), never under the new.
        if (this.completions.length > 0) this.sendReport()
        this.generation = o.generation
        this.fences++
        this.io.warn(`fenced to generation ${o.generation}: dropped every object and task of older ones`)
        break
      case "EpochReport":
        this.epochReports++
        for (const objects of chunkObjects(o.objects)) {
          this.io.tellCoordinator(EpochReport, [
            {
              worker: this.options.id,
              incarnation: this.options.incarnation,
              generation: o.generation,
              epoch: o.epoch,
              objects
            }
          ])
        }
        break
      case "Consumed":
      case "Produced":
        this.audit?.write(
          `${o._tag === "Produced" ? "P" : "C"} ${o.seq} ${o.key} ${o.version} ${auditHash(o.value)} ` +
            `${this.core.generation} ${this.options.incarnation}\n`
        )
        break
    }
  }

  /** Tracing: the requesting side's span ends when the object arrives; the sending side's is recorded here. */
  private observeInput(input: WorkerInput<Transaction>): void {
    if (!this.io.spans.enabled) return
    if (input._tag === "ObjectRequest" && input.trace !== "") {
      this.requestSeen.set(versionKey(input.key, input.version), nowNs())
    } else if (input._tag === "ObjectArrived" && input.value !== undefined) {
      const vk = versionKey(input.key, input.version)
      const started = this.fetchStarted.get(vk)
      if (started === undefined) return
      this.fetchStarted.delete(vk)
      this.io.spans.record("remora.lease_transfer", started.at, {
        parent: this.parentOf(input.key, input.version),
        kind: "client",
        attributes: this.transferAttributes(input.key, input.version, String(input.from), this.options.id, "in")
      })
    }
  }

  private readonly traceOfWanted = (key: string, version: number): string => {
    const seq = this.core.wanted.get(versionKey(key, version))
    const task = seq === undefined ? undefined : this.core.tasks.get(seq)
    return task?.data.trace ?? ""
  }

  private parentOf(key: string, version: number): string {
    return this.fetching(key, version) ?? this.traceOfWanted(key, version)
  }

  private fetching(key: string, version: number): string | undefined {
    return this.core.fetching.get(versionKey(key, version))?.trace
  }

  private recordTransferOut(key: string, version: number, to: string, trace: string): void {
    if (!this.io.spans.enabled || trace === "") return
    const vk = versionKey(key, version)
    const since = this.requestSeen.get(vk) ?? nowNs()
    this.requestSeen.delete(vk)
    this.io.spans.record("remora.lease_transfer", since, {
      parent: trace,
      kind: "server",
      attributes: this.transferAttributes(key, version, this.options.id, to, "out")
    })
  }

  private transferAttributes(key: string, version: number, from: string, to: string, direction: "in" | "out") {
    return {
      "remora.object.key": key,
      "remora.object.version": version,
      "remora.lease.from": from,
      "remora.lease.to": to,
      "remora.lease.direction": direction,
      "remora.worker": this.options.id
    }
  }

  private scheduleReport(): void {
    if (this.reportScheduled) return
    this.reportScheduled = true
    setImmediate(this.sendReport)
  }

  private readonly sendReport = (): void => {
    this.reportScheduled = false
    const load = workerLoad(this.core)
    const report: WorkerReport = {
      worker: this.options.id,
      completions: this.completions,
      statelessDone: this.statelessDone,
      statelessDoneUs: this.statelessDoneUs,
      queued: load.queued,
      waiting: load.waiting,
      busyCores: load.busyCores,
      cores: this.options.cores,
      incarnation: this.options.incarnation,
      generation: this.generation
    }
    this.completions = []
    this.statelessDone = 0
    this.statelessDoneUs = 0
    this.io.tellCoordinator(WorkerReport, [report])
  }
}
