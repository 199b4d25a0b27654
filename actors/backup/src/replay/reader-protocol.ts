/**
 * Messages between the replay and its reader threads. A task is a slice of a batch plan as fixed-width
 * records (key 52 bytes, source 1, as-of block u32 big-endian), transferred, not copied.
 */
export const RECORD_BYTES = 57
/** asOf of a record that is not read as of a block (plain, zero). */
export const NO_AS_OF = 0xffffffff

export interface ReaderInit {
  readonly path: string
  /** Emulated remote-disk delay per seek (remote-disk.ts); 0 on the real disk alone. */
  readonly latencyUs: number
}

export interface ReadTask {
  readonly _tag: "Read"
  readonly id: number
  readonly records: ArrayBuffer
  readonly count: number
  /** Contract addresses (latin1) whose code to load. */
  readonly code: ReadonlyArray<string>
}

export interface ReadStats {
  readonly plain: number
  readonly changeset: number
  readonly zero: number
  readonly bytesRead: number
  readonly readMs: number
}

export type ReaderToHost =
  | { readonly _tag: "Ready" }
  | {
      readonly _tag: "Done"
      readonly id: number
      /** Value of each record, in task order. */
      readonly values: Float64Array
      /** Head block of the reader's snapshot. */
      readonly head: number
      readonly stats: ReadStats
      /** Code of each requested address, concatenated; a length of -1 means no code there. */
      readonly codeBytes: ArrayBuffer
      readonly codeLengths: Int32Array
    }
  | { readonly _tag: "Failed"; readonly id: number; readonly message: string }

export type HostToReader = ReadTask | { readonly _tag: "Stop" }
