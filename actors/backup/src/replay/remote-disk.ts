/**
 * `--latency-us`: a what-if for a backup on remote storage. Every store seek a read makes first waits the
 * given time, blocking its thread as a device read would: k reader threads keep k waits in flight, the
 * executor's on-demand reads wait one after another. Emulated on top of the real disk (no page-cache
 * model: a seek the page cache would serve waits too), so the headline numbers never use it.
 */
import type { StorageKey } from "@reef/chain"
import { Source, StateReader, type StoreTables } from "@reef/chain/store"

const parked = new Int32Array(new SharedArrayBuffer(4))

/** Blocks the thread for `us` microseconds (Atomics.wait: no busy loop, works on Node's main thread). */
export const stall = (us: number): void => {
  if (us > 0) Atomics.wait(parked, 0, 0, us / 1000)
}

/** Seeks of the last read: the history index then the change set, or PlainState alone. */
const seeksOf = (source: Source): number => (source === Source.Changeset ? 2 : 1)

class RemoteDiskReader extends StateReader {
  constructor(
    tables: StoreTables,
    private readonly latencyUs: number
  ) {
    super(tables)
  }

  override storage(key: StorageKey, asOf: number, head: number): number {
    const value = super.storage(key, asOf, head)
    stall(this.latencyUs * seeksOf(this.lastSource))
    return value
  }

  override storageAt(bytes: Uint8Array, offset: number, asOf: number, head: number): number {
    const value = super.storageAt(bytes, offset, asOf, head)
    stall(this.latencyUs * seeksOf(this.lastSource))
    return value
  }

  override plainAt(bytes: Uint8Array, offset: number): number {
    const value = super.plainAt(bytes, offset)
    stall(this.latencyUs)
    return value
  }

  override code(address: string): Buffer | undefined {
    const code = super.code(address)
    stall(this.latencyUs)
    return code
  }
}

/** A reader of `tables`, on the real disk or, with `latencyUs` > 0, on the emulated remote one. */
export const stateReader = (tables: StoreTables, latencyUs = 0): StateReader =>
  latencyUs > 0 ? new RemoteDiskReader(tables, latencyUs) : new StateReader(tables)
