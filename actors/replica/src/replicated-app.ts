/**
 * An application a replica replicates instead of its own KV records (`--app redis`: a local redis-server): the
 * applier hands it every decided Redis write in the log's order, the catch-up server captures its contents for
 * a snapshot, and a joiner's snapshot is restored into it. Captured contents travel as KvEntry records of
 * the usual snapshot chunks (the app says how it encodes them).
 */
import type { KvEntry } from "@reef/proto"
import type { RespValue } from "./resp-value.js"

export interface ReplicatedApp {
  /** Applies one decided write (called in the log's order); the promise is its reply. Never rejects. */
  readonly apply: (args: ReadonlyArray<Uint8Array>) => Promise<RespValue>
  /**
   * The contents as of every write applied so far (whatever is applied after this call is not in them),
   * as snapshot entries.
   */
  readonly capture: () => Promise<ReadonlyArray<KvEntry>>
  /** Replaces the contents with captured ones, before any write applied after this call. */
  readonly restore: (entries: ReadonlyArray<KvEntry>) => void
}
