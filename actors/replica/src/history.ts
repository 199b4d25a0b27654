/**
 * Histories of client operations against the replicated key-value store, as recorded by integration tests
 * and read by the linearizability checker (`linearizability.ts`).
 *
 * Pure data: the recorder never reads a clock; the caller passes `nowMs` (e.g. `performance.now()`), so the
 * same code records real gRPC clients and simulated ones. Values are strings here; the recording test
 * converts the wire's bytes.
 *
 * An operation whose outcome is unknown (timed out, or failed with an ambiguous status such as
 * DEADLINE_EXCEEDED or UNAVAILABLE) keeps `completeMs === undefined` and no output: it may have taken effect
 * at any point after its invocation, or never (the Knossos/Porcupine treatment). Operations that failed
 * definitely (e.g. INVALID_ARGUMENT) changed nothing and are left out of the history.
 */

/** Client identity, only used to report violations: the checker orders operations by real time alone. */
export type ProcessId = string | number

export interface SetInput {
  readonly _tag: "Set"
  readonly key: string
  readonly value: string
}
export interface GetInput {
  readonly _tag: "Get"
  readonly key: string
}
export interface DeleteInput {
  readonly _tag: "Delete"
  readonly key: string
}
export interface CasInput {
  readonly _tag: "Cas"
  readonly key: string
  /** `null` expects the key to be absent. */
  readonly expected: string | null
  readonly value: string
}
export type KvInput = SetInput | GetInput | DeleteInput | CasInput

export interface SetOutput {
  readonly ok: true
}
export interface GetOutput {
  readonly found: boolean
  /** Required when `found`. */
  readonly value?: string
}
export interface DeleteOutput {
  readonly existed: boolean
}
export interface CasOutput {
  readonly swapped: boolean
  /** When the swap failed, the value found (`null` = absent) if the server reported it. */
  readonly current?: string | null
}

export type KvOutputOf<I extends KvInput> = I extends SetInput
  ? SetOutput
  : I extends GetInput
    ? GetOutput
    : I extends DeleteInput
      ? DeleteOutput
      : I extends CasInput
        ? CasOutput
        : never

/** An input with its output; `output` is absent while the outcome is unknown. */
export type KvOperation =
  | (SetInput & { readonly output?: SetOutput })
  | (GetInput & { readonly output?: GetOutput })
  | (DeleteInput & { readonly output?: DeleteOutput })
  | (CasInput & { readonly output?: CasOutput })

export interface HistoryEntry {
  readonly process: ProcessId
  readonly op: KvOperation
  readonly invokeMs: number
  /** `undefined`: the outcome is unknown (ambiguous failure, or never answered). */
  readonly completeMs?: number
}

declare const operationInput: unique symbol
/** Handle of a recorded invocation; its type remembers the input so `complete` demands the matching output. */
export type OperationId<I extends KvInput = KvInput> = number & { readonly [operationInput]: I }

interface Recorded {
  readonly process: ProcessId
  readonly input: KvInput
  readonly invokeMs: number
  /** `pending` until completed or failed; a definite failure removes the record. */
  status: "pending" | "ambiguous" | { readonly output: KvOutputOf<KvInput>; readonly completeMs: number }
}

/** Assertion, not an expected failure: a malformed recording is a bug in the test that records it. */
const assert: (condition: boolean, message: string) => asserts condition = (condition, message) => {
  if (!condition) throw new Error(`HistoryRecorder: ${message}`)
}

/** The output fields each operation must report, checked so a mixed-up `complete` fails where it happens. */
const outputMatches = (input: KvInput, output: object): boolean => {
  switch (input._tag) {
    case "Set":
      return "ok" in output && output.ok === true
    case "Get":
      return "found" in output && typeof output.found === "boolean" && (!output.found || "value" in output)
    case "Delete":
      return "existed" in output && typeof output.existed === "boolean"
    case "Cas":
      return "swapped" in output && typeof output.swapped === "boolean"
  }
}

export class HistoryRecorder {
  private readonly recorded = new Map<number, Recorded>()
  private nextId = 0

  invoke<I extends KvInput>(process: ProcessId, op: I, nowMs: number): OperationId<I> {
    assert(Number.isFinite(nowMs), `invoke at a non-finite time ${nowMs}`)
    const id = this.nextId++
    this.recorded.set(id, { process, input: op, invokeMs: nowMs, status: "pending" })
    return id as OperationId<I>
  }

  complete<I extends KvInput>(id: OperationId<I>, output: KvOutputOf<I>, nowMs: number): void {
    const record = this.pending(id)
    assert(nowMs >= record.invokeMs, `operation ${id} completes at ${nowMs}, before its invocation`)
    assert(outputMatches(record.input, output), `output ${JSON.stringify(output)} does not fit a ${record.input._tag}`)
    record.status = { output, completeMs: nowMs }
  }

  /** `ambiguous`: the operation may or may not have taken effect; otherwise it certainly did not. */
  fail(id: OperationId, ambiguous: boolean): void {
    const record = this.pending(id)
    if (ambiguous) record.status = "ambiguous"
    else this.recorded.delete(id)
  }

  /** The history in invocation order; operations still pending count as ambiguous. */
  entries(): ReadonlyArray<HistoryEntry> {
    const entries: Array<HistoryEntry> = []
    for (const record of this.recorded.values()) {
      const { process, input, invokeMs, status } = record
      if (typeof status === "string") entries.push({ process, op: input, invokeMs })
      else
        entries.push({
          process,
          op: { ...input, output: status.output } as KvOperation,
          invokeMs,
          completeMs: status.completeMs
        })
    }
    return entries
  }

  private pending(id: OperationId): Recorded {
    const record = this.recorded.get(id)
    assert(record !== undefined, `unknown operation ${id} (never invoked, or failed definitely)`)
    assert(record.status === "pending", `operation ${id} already finished`)
    return record
  }
}

const quote = (value: string | null | undefined): string => (value == null ? "absent" : JSON.stringify(value))

/** One line per operation for failure reports, e.g. `cas(k, "a" → "b") → failed, current "c"`. */
export const formatOperation = (op: KvOperation): string => {
  const key = JSON.stringify(op.key)
  switch (op._tag) {
    case "Set":
      return `set(${key}, ${quote(op.value)})${op.output === undefined ? " → ?" : ""}`
    case "Get":
      return `get(${key}) → ${op.output === undefined ? "?" : quote(op.output.found ? op.output.value : null)}`
    case "Delete":
      return `delete(${key}) → ${op.output === undefined ? "?" : op.output.existed ? "existed" : "was absent"}`
    case "Cas": {
      const call = `cas(${key}, ${quote(op.expected)} → ${quote(op.value)})`
      if (op.output === undefined) return `${call} → ?`
      if (op.output.swapped) return `${call} → swapped`
      return `${call} → not swapped${op.output.current === undefined ? "" : `, current ${quote(op.output.current)}`}`
    }
  }
}

const ms = (t: number): string => t.toFixed(1)

/** `[12.0, 14.5]` in ms; an unknown outcome is an open interval `[12.0, …)`. */
export const formatInterval = (entry: HistoryEntry): string =>
  `[${ms(entry.invokeMs)}, ${entry.completeMs === undefined ? "…)" : `${ms(entry.completeMs)}]`}`

/** `p3 [12.0, 14.5] get("k") → "a"` */
export const formatEntry = (entry: HistoryEntry): string =>
  `p${entry.process} ${formatInterval(entry)} ${formatOperation(entry.op)}`
