/**
 * The primary's hint recorder (§4.1, Algorithm 1 Phases 1 and 2): attached to any executor as its access
 * recorder, it sees each storage key once, at the block's first access, with the source that read used
 * (the executor's own two-step lookup found it, so annotating costs nothing more), and each contract whose
 * code the block loaded. A read a cache answered has no source; `take` asks `annotate` for those (reth's
 * source tracker: a history-index seek), then builds the block's hint and resets for the next block.
 */
import type { AccessRecorder } from "../runtime/execution.js"
import type { Address, StorageKey } from "../state/keys.js"
import { type ReadSource, SOURCE_UNKNOWN, type Source } from "../state/store.js"
import type { Hint } from "./format.js"

/** The cheapest source of a key whose value (before the block) a cache supplied. */
export type Annotate = (key: StorageKey, value: number) => Source

export class HintRecorder implements AccessRecorder {
  private keys: Array<StorageKey> = []
  private sources: Array<ReadSource> = []
  private codes: Array<Address> = []
  /** Indices of keys a cache answered, with their values. */
  private unknown: Array<number> = []

  constructor(private readonly annotate?: Annotate) {}

  storage(key: StorageKey, source: ReadSource, value: number): void {
    if (source === SOURCE_UNKNOWN) this.unknown.push(this.keys.length, value)
    this.keys.push(key)
    this.sources.push(source)
  }

  code(address: Address): void {
    this.codes.push(address)
  }

  take(block: number): Hint {
    const sources = Uint8Array.from(this.sources)
    for (let i = 0; i < this.unknown.length; i += 2) {
      const at = this.unknown[i]!
      if (this.annotate === undefined) throw new Error("a cache answered a read but the recorder cannot annotate")
      sources[at] = this.annotate(this.keys[at]!, this.unknown[i + 1]!)
    }
    const hint: Hint = { block, storage: this.keys, sources, code: this.codes }
    this.keys = []
    this.sources = []
    this.codes = []
    this.unknown = []
    return hint
  }
}
