/**
 * The engine's side of "values travel once" (core/value-refs.ts): the value bodies it has seen, by instance,
 * and the round messages held back until the bodies they name arrive.
 *
 * - Every body that arrives (a round message's, an answer's) or leaves (what this engine sends) is kept for a
 *   few instances: long enough to resolve the references of the instance it belongs to, and to answer a peer
 *   still in that instance after this engine moved on.
 * - A round message naming a body not held here is held, and its sender is asked for the missing bodies (once
 *   per sender and value): the sender merged them as whole values, so it holds them. Several held messages
 *   naming one value ask each of their senders, so one crashed sender does not leave the others waiting.
 * - An answer resolves the held messages it completes, in the order they arrived. A message still held when
 *   its instance is left behind is dropped: for the core it was an omission (it would have come too late).
 */
import type { ProcessId, RoundMsg, Value, ValueRef } from "./core/index.js"
import { valueKey } from "./core/index.js"
import { type CompactRound, type Resolution, resolveRound } from "./core/value-refs.js"

/** Instances behind the newest one whose bodies are kept (the current instance's and the one before). */
const KEEP_INSTANCES = 2

/** At most this many messages are held at once; beyond, the oldest is dropped (an omission). */
const MAX_HELD = 256

export interface RoundResolverIo {
  /** Asks `to` for the bodies of `refs` (a ValuesRequest). */
  readonly request: (to: ProcessId, instance: number, refs: ReadonlyArray<ValueRef>) => void
  /** A round message, resolved: on to the core. */
  readonly deliver: (from: ProcessId, msg: RoundMsg) => void
  /** Bodies the core holds right now (its current V), besides the ones kept here. */
  readonly known: (key: string) => Value | undefined
}

interface Held {
  readonly from: ProcessId
  readonly msg: CompactRound
}

export class RoundResolver {
  /** Bodies by value key, with the newest instance they were seen in. */
  private readonly bodies = new Map<string, { readonly value: Value; instance: number }>()
  /** Keys kept per instance, to forget them with it (a key seen again later moves to the later one). */
  private readonly keysByInstance = new Map<number, Array<string>>()
  private held: Array<Held> = []
  /** `${from} ${key}` already asked for, per instance. */
  private readonly asked = new Map<number, Set<string>>()
  private newest = 0
  /** Held messages dropped: their instance was left behind, or too many were held. */
  dropped = 0
  /** Round messages that waited for bodies. */
  heldTotal = 0

  constructor(
    private readonly io: RoundResolverIo,
    private readonly resolve: (
      msg: CompactRound,
      lookup: (key: string) => Value | undefined
    ) => Resolution = resolveRound
  ) {}

  private readonly lookup = (key: string): Value | undefined => this.bodies.get(key)?.value ?? this.io.known(key)

  /** Keeps `values` as bodies of `instance`. */
  remember(instance: number, values: ReadonlyArray<Value>): void {
    if (instance < this.newest - KEEP_INSTANCES) return
    let keys: Array<string> | undefined
    for (const v of values) {
      const key = valueKey(v)
      const known = this.bodies.get(key)
      if (known !== undefined && known.instance >= instance) continue
      if (known === undefined) this.bodies.set(key, { value: v, instance })
      else known.instance = instance
      keys ??= this.keysByInstance.get(instance) ?? []
      keys.push(key)
    }
    if (keys !== undefined) this.keysByInstance.set(instance, keys)
    if (instance > this.newest) this.advance(instance)
  }

  /** A round message as received: its bodies kept, then on to the core, or held until its bodies arrive. */
  onRound(from: ProcessId, msg: CompactRound): void {
    if (msg.values.length > 0) this.remember(msg.instance, msg.values)
    else if (msg.instance > this.newest) this.advance(msg.instance)
    const resolution = this.resolve(msg, this.lookup)
    if (resolution._tag === "Resolved") {
      this.io.deliver(from, resolution.msg)
      // A proposer's round-1 message that came after a peer's round 2 naming its value (reordered).
      if (msg.values.length > 0) this.retry()
      return
    }
    if (msg.instance < this.newest - KEEP_INSTANCES + 1) {
      this.dropped++
      return
    }
    this.heldTotal++
    this.held.push({ from, msg })
    if (this.held.length > MAX_HELD) {
      this.held.shift()
      this.dropped++
    }
    this.ask(from, msg.instance, resolution.refs)
  }

  /** An answer to a request: keeps the bodies, then resolves what they complete. */
  onValues(instance: number, values: ReadonlyArray<Value>): void {
    if (values.length === 0) return
    this.remember(instance, values)
    this.retry()
  }

  /** Passes on, in arrival order, the held messages whose bodies are all here now. */
  private retry(): void {
    if (this.held.length === 0) return
    const still: Array<Held> = []
    const ready: Array<{ readonly from: ProcessId; readonly msg: RoundMsg }> = []
    for (const h of this.held) {
      const resolution = this.resolve(h.msg, this.lookup)
      if (resolution._tag === "Resolved") ready.push({ from: h.from, msg: resolution.msg })
      else still.push(h)
    }
    this.held = still
    for (const r of ready) this.io.deliver(r.from, r.msg)
  }

  /** The bodies of `refs` held here (kept, or in the core's V): what a peer's request is answered with. */
  answer(refs: ReadonlyArray<ValueRef>): Array<Value> {
    const found: Array<Value> = []
    for (const ref of refs) {
      const body = this.lookup(valueKey(ref))
      if (body !== undefined && body.kind === ref.kind) found.push(body)
    }
    return found
  }

  /** Messages held now (for tests and stats). */
  heldCount(): number {
    return this.held.length
  }

  private ask(from: ProcessId, instance: number, refs: ReadonlyArray<ValueRef>): void {
    const asked = this.asked.get(instance) ?? new Set<string>()
    this.asked.set(instance, asked)
    const fresh = refs.filter((r) => {
      const key = `${from} ${valueKey(r)}`
      if (asked.has(key)) return false
      asked.add(key)
      return true
    })
    if (fresh.length > 0) this.io.request(from, instance, fresh)
  }

  /** `instance` is the newest seen: forget what belongs to instances too old to matter. */
  private advance(instance: number): void {
    this.newest = instance
    const oldest = instance - KEEP_INSTANCES
    for (const [i, keys] of this.keysByInstance) {
      if (i >= oldest) continue
      for (const key of keys) if ((this.bodies.get(key)?.instance ?? oldest) < oldest) this.bodies.delete(key)
      this.keysByInstance.delete(i)
    }
    for (const i of this.asked.keys()) if (i < oldest) this.asked.delete(i)
    if (this.held.some((h) => h.msg.instance < oldest + 1)) {
      const kept = this.held.filter((h) => h.msg.instance >= oldest + 1)
      this.dropped += this.held.length - kept.length
      this.held = kept
    }
  }
}
