/**
 * Between the pure core's plain messages and the protobuf wire (reef.v1.PopucWire). Decoding validates
 * everything the core relies on, so a malformed message on the engine subject becomes a counted drop,
 * never an exception inside the consensus step.
 */
// The subpath keeps the engine thread free of the other schemas and of grpc-js (one isolate each).
import { type PopucValue, PopucValueKind, type PopucValueRef, PopucWire } from "@reef/proto/popuc"
import { EMPTY_PAYLOAD, type ProcessId, type Value, type ValueKind, type WireMsg } from "./core/index.js"
import type { ValueRef } from "./core/types.js"
import type { CompactRound } from "./core/value-refs.js"

/**
 * What engines send each other: the core's messages, round messages in their wire form (core/value-refs.ts:
 * later rounds name values by identity), and the request and answer for bodies a receiver lacks.
 */
export type EngineWireMsg =
  | ({ readonly _tag: "Round" } & CompactRound)
  | Exclude<WireMsg, { readonly _tag: "Round" }>
  | { readonly _tag: "ValuesRequest"; readonly instance: number; readonly refs: ReadonlyArray<ValueRef> }
  | { readonly _tag: "Values"; readonly instance: number; readonly values: ReadonlyArray<Value> }

const kindToWire: Record<ValueKind, PopucValueKind> = {
  client: PopucValueKind.POPUC_VALUE_KIND_CLIENT,
  heartbeat: PopucValueKind.POPUC_VALUE_KIND_HEARTBEAT,
  membership: PopucValueKind.POPUC_VALUE_KIND_MEMBERSHIP
}

const kindFromWire = (kind: PopucValueKind): ValueKind | undefined =>
  kind === PopucValueKind.POPUC_VALUE_KIND_CLIENT
    ? "client"
    : kind === PopucValueKind.POPUC_VALUE_KIND_HEARTBEAT
      ? "heartbeat"
      : kind === PopucValueKind.POPUC_VALUE_KIND_MEMBERSHIP
        ? "membership"
        : undefined

const toBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

export const valueToWire = (v: Value): PopucValue => ({
  proposer: v.proposer,
  incarnation: v.incarnation,
  seq: v.seq,
  kind: kindToWire[v.kind],
  payload: toBuffer(v.payload),
  members: [...v.members]
})

/** At most this many characters; a real one has 16 (types.ts). */
const MAX_INCARNATION_LENGTH = 64

/** A well-formed value identity: a known kind, a proposer and an incarnation, a seq >= 0. */
const validRef = (r: { readonly proposer: string; readonly incarnation: string; readonly seq: number }): boolean =>
  r.proposer !== "" &&
  r.incarnation !== "" &&
  r.incarnation.length <= MAX_INCARNATION_LENGTH &&
  Number.isSafeInteger(r.seq) &&
  r.seq >= 0

/**
 * The value a decoded message carries; undefined when it is not well formed (unknown kind, empty proposer or
 * incarnation, negative seq). Its payload is the decoder's buffer, which may be a slice of a pool shared with other
 * payloads: fine inside the engine, but it must be copied before it crosses a thread (see `ownPayload`).
 */
const valueInMessage = (v: PopucValue): Value | undefined => {
  const kind = kindFromWire(v.kind)
  if (kind === undefined || !validRef(v)) return undefined
  const payload = v.payload.byteLength === 0 ? EMPTY_PAYLOAD : v.payload
  return { proposer: v.proposer, incarnation: v.incarnation, seq: v.seq, kind, payload, members: v.members }
}

/**
 * `v` with a payload in an ArrayBuffer of its own, exactly its size: what may be posted to another thread
 * (a structured clone copies a view's whole buffer) or kept without keeping the message it arrived in alive.
 * A payload that already spans its whole buffer (a host's proposal, an empty one) is not copied.
 */
export const ownPayload = (v: Value): Value =>
  v.payload.byteLength === v.payload.buffer.byteLength ? v : { ...v, payload: new Uint8Array(v.payload) }

/** Like the values of `decodeWire`, with a payload of its own (values handed over by a peer's host). */
export const valueFromWire = (v: PopucValue): Value | undefined => {
  const value = valueInMessage(v)
  return value === undefined ? undefined : ownPayload(value)
}

const refToWire = (r: ValueRef): PopucValueRef => ({
  proposer: r.proposer,
  incarnation: r.incarnation,
  seq: r.seq,
  kind: kindToWire[r.kind]
})

const msgToWire = (msg: WireMsg | EngineWireMsg): PopucWire["msg"] => {
  switch (msg._tag) {
    case "Round":
      return {
        $case: "round",
        value: {
          instance: msg.instance,
          attempt: msg.attempt ?? 0,
          decidedAttempt: msg.decidedAttempt ?? 0,
          round: msg.round,
          values: msg.values.map(valueToWire),
          locked: [...msg.locked],
          decided: msg.decided.map(refToWire),
          refs: "refs" in msg ? msg.refs.map(refToWire) : []
        }
      }
    case "ValuesRequest":
      return { $case: "valuesRequest", value: { instance: msg.instance, refs: msg.refs.map(refToWire) } }
    case "Values":
      return { $case: "values", value: { instance: msg.instance, values: msg.values.map(valueToWire) } }
    default:
      return { $case: "syncStart", value: { request: msg._tag === "StartRequest" } }
  }
}

/** A core message (a round message whole) or an engine message (a round message in its wire form). */
export const encodeWire = (
  group: string,
  from: ProcessId,
  msg: WireMsg | EngineWireMsg,
  sentAtUs: number
): Uint8Array => PopucWire.encode({ group, from, sentAtUs: Math.round(sentAtUs), msg: msgToWire(msg) }).finish()

/** Well-formed value identities, or undefined at the first malformed one. */
const refsFromWire = (refs: ReadonlyArray<PopucValueRef>): Array<ValueRef> | undefined => {
  const out: Array<ValueRef> = []
  for (const r of refs) {
    const kind = kindFromWire(r.kind)
    if (kind === undefined || !validRef(r)) return undefined
    out.push({ proposer: r.proposer, incarnation: r.incarnation, seq: r.seq, kind })
  }
  return out
}

/** Well-formed values, or undefined and the first malformed one's proposer. */
const valuesFromWire = (values: ReadonlyArray<PopucValue>): Array<Value> | { readonly bad: string } => {
  const out: Array<Value> = []
  for (const v of values) {
    const value = valueInMessage(v)
    if (value === undefined) return { bad: v.proposer }
    out.push(value)
  }
  return out
}

export type DecodedWire =
  | { readonly _tag: "Ok"; readonly from: ProcessId; readonly msg: EngineWireMsg; readonly sentAtUs: number }
  | { readonly _tag: "Invalid"; readonly reason: string }

const invalid = (reason: string): DecodedWire => ({ _tag: "Invalid", reason })

/** Decodes and validates one engine message for `group`. */
export const decodeWire = (group: string, bytes: Uint8Array): DecodedWire => {
  let wire: PopucWire
  try {
    wire = PopucWire.decode(bytes)
  } catch (cause) {
    return invalid(`not a PopucWire: ${(cause as Error).message}`)
  }
  if (wire.group !== group) return invalid(`group "${wire.group}" is not "${group}"`)
  if (wire.from === "") return invalid("no sender")
  const msg = wire.msg
  if (msg === undefined) return invalid("no message")
  if (msg.$case === "syncStart") {
    return {
      _tag: "Ok",
      from: wire.from,
      sentAtUs: wire.sentAtUs,
      msg: msg.value.request ? { _tag: "StartRequest" } : { _tag: "Start" }
    }
  }
  if (msg.$case === "valuesRequest") {
    const { instance } = msg.value
    if (!Number.isSafeInteger(instance) || instance < 1) return invalid(`bad instance ${instance}`)
    const refs = refsFromWire(msg.value.refs)
    if (refs === undefined) return invalid("bad reference in a values request")
    return { _tag: "Ok", from: wire.from, sentAtUs: wire.sentAtUs, msg: { _tag: "ValuesRequest", instance, refs } }
  }
  if (msg.$case === "values") {
    const { instance } = msg.value
    if (!Number.isSafeInteger(instance) || instance < 1) return invalid(`bad instance ${instance}`)
    const values = valuesFromWire(msg.value.values)
    if (!Array.isArray(values)) return invalid(`bad value from "${values.bad}"`)
    return { _tag: "Ok", from: wire.from, sentAtUs: wire.sentAtUs, msg: { _tag: "Values", instance, values } }
  }
  const round = msg.value
  if (!Number.isSafeInteger(round.instance) || round.instance < 1) return invalid(`bad instance ${round.instance}`)
  if (!Number.isSafeInteger(round.round) || round.round < 1) return invalid(`bad round ${round.round}`)
  // Later rounds name most values by reference (core/value-refs.ts): only bodies are decoded here.
  const values = valuesFromWire(round.values)
  if (!Array.isArray(values)) return invalid(`bad value from "${values.bad}"`)
  if (round.locked.some((p) => p === "")) return invalid("empty id in locked")
  const decided = refsFromWire(round.decided)
  if (decided === undefined) return invalid("bad decided reference")
  const refs = refsFromWire(round.refs)
  if (refs === undefined) return invalid("bad value reference")
  return {
    _tag: "Ok",
    from: wire.from,
    sentAtUs: wire.sentAtUs,
    msg: {
      _tag: "Round",
      instance: round.instance,
      attempt: round.attempt,
      round: round.round,
      values,
      refs,
      locked: round.locked,
      decided,
      decidedAttempt: round.decidedAttempt
    }
  }
}
