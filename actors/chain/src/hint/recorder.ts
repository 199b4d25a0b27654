/**
 * The primary's hint recorder (§4.1, Algorithm 1 Phases 1 and 2): attached to any executor as its access
 * recorder, it sees each storage key once, at the block's first access, with the source that read used
 * (the executor's own two-step lookup found it, so annotating costs nothing more), and each contract whose
 * code the block loaded. `take` builds the block's hint and resets the recorder for the next block.
 */
import type { AccessRecorder } from "../runtime/execution.js"
import type { Address, StorageKey } from "../state/keys.js"
import type { Source } from "../state/store.js"
import type { Hint } from "./format.js"

export class HintRecorder implements AccessRecorder {
  private keys: Array<StorageKey> = []
  private sources: Array<Source> = []
  private codes: Array<Address> = []

  storage(key: StorageKey, source: Source): void {
    this.keys.push(key)
    this.sources.push(source)
  }

  code(address: Address): void {
    this.codes.push(address)
  }

  take(block: number): Hint {
    const hint: Hint = { block, storage: this.keys, sources: Uint8Array.from(this.sources), code: this.codes }
    this.keys = []
    this.sources = []
    this.codes = []
    return hint
  }
}
