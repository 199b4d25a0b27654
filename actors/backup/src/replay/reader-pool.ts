/**
 * k reader threads (App. E.3: one blocked page fault per thread, k in flight), each opening the store
 * read-only. A batch plan's slices go one per reader; the values come back in plan order.
 */
import { Worker } from "node:worker_threads"
import type { Address } from "@reef/chain"
import * as Data from "effect/Data"
import type { BatchPlan } from "../core/plan.js"
import {
  type HostToReader,
  NO_AS_OF,
  RECORD_BYTES,
  type ReaderInit,
  type ReaderToHost,
  type ReadStats
} from "./reader-protocol.js"

export class ReaderError extends Data.TaggedError("ReaderError")<{ readonly reason: string }> {
  override get message() {
    return `prefetch reader failed: ${this.reason}`
  }
}

export interface BatchRead {
  /** Value of every plan entry (zero entries stay 0). */
  readonly values: Float64Array
  /** The oldest head among the readers' snapshots: every value is as of at least this block. */
  readonly head: number
  readonly code: ReadonlyMap<Address, Uint8Array>
  readonly stats: ReadStats
  /** The slowest reader's time: the batch's prefetch is as long as its longest slice. */
  readonly slowestReaderMs: number
}

const spawnReader = (init: ReaderInit): Worker => {
  // From source (tsx) the thread must register the TypeScript loader itself; from dist it is plain JS.
  if (import.meta.url.endsWith(".ts")) {
    const entry = new URL("./reader-worker.ts", import.meta.url).href
    return new Worker(`import { register } from "tsx/esm/api"; register(); await import(${JSON.stringify(entry)})`, {
      eval: true,
      workerData: init
    })
  }
  return new Worker(new URL("./reader-worker.js", import.meta.url), { workerData: init })
}

type Done = Extract<ReaderToHost, { _tag: "Done" }>

export class ReaderPool {
  private nextId = 1
  private readonly pending = new Map<number, { resolve: (done: Done) => void; reject: (error: ReaderError) => void }>()
  private broken: ReaderError | undefined

  private constructor(private readonly workers: ReadonlyArray<Worker>) {
    for (const worker of workers) {
      worker.on("message", (message: ReaderToHost) => {
        if (message._tag === "Ready") return
        const waiter = this.pending.get(message.id)
        this.pending.delete(message.id)
        if (message._tag === "Done") waiter?.resolve(message)
        else waiter?.reject(new ReaderError({ reason: message.message }))
      })
      worker.on("error", (error) => this.fail(new ReaderError({ reason: `thread died: ${error.message}` })))
    }
  }

  /** Starts `readers` threads on the store at `path` (each seek delayed by `latencyUs`) and waits until each has opened it. */
  static async start(path: string, readers: number, latencyUs = 0): Promise<ReaderPool> {
    const workers = Array.from({ length: Math.max(1, readers) }, () => spawnReader({ path, latencyUs }))
    await Promise.all(
      workers.map(
        (worker) =>
          new Promise<void>((resolve, reject) => {
            const onMessage = (message: ReaderToHost) => {
              if (message._tag === "Ready") {
                worker.off("message", onMessage)
                resolve()
              }
            }
            worker.on("message", onMessage)
            worker.once("error", reject)
          })
      )
    )
    return new ReaderPool(workers)
  }

  get size(): number {
    return this.workers.length
  }

  /** Reads every non-zero entry of `plan` and the code it lists. */
  async read(plan: BatchPlan): Promise<BatchRead> {
    if (this.broken !== undefined) throw this.broken
    const slices = plan.slices.length > 0 ? plan.slices : [{ start: 0, end: 0 }]
    const codeFor = slices.map((): Array<Address> => [])
    plan.code.forEach((address, i) => {
      codeFor[i % slices.length]!.push(address)
    })
    const tasks = slices.map((slice, i) => {
      const count = slice.end - slice.start
      const records = new ArrayBuffer(count * RECORD_BYTES)
      const bytes = Buffer.from(records)
      for (let e = slice.start; e < slice.end; e++) {
        const offset = (e - slice.start) * RECORD_BYTES
        bytes.write(plan.keys[e]!, offset, 52, "latin1")
        bytes[offset + 52] = plan.sources[e]!
        const asOf = plan.asOf[e]!
        bytes.writeUInt32BE(asOf < 0 ? NO_AS_OF : asOf, offset + 53)
      }
      return this.send(this.workers[i % this.workers.length]!, records, count, codeFor[i]!)
    })
    const results = await Promise.all(tasks)
    const values = new Float64Array(plan.keys.length)
    const code = new Map<Address, Uint8Array>()
    const stats = { plain: 0, changeset: 0, zero: 0, bytesRead: 0, readMs: 0 }
    let head = Number.POSITIVE_INFINITY
    let slowestReaderMs = 0
    results.forEach((result, i) => {
      values.set(result.values, slices[i]!.start)
      head = Math.min(head, result.head)
      slowestReaderMs = Math.max(slowestReaderMs, result.stats.readMs)
      stats.plain += result.stats.plain
      stats.changeset += result.stats.changeset
      stats.zero += result.stats.zero
      stats.bytesRead += result.stats.bytesRead
      stats.readMs += result.stats.readMs
      const bytes = new Uint8Array(result.codeBytes)
      let at = 0
      codeFor[i]!.forEach((address, j) => {
        const length = result.codeLengths[j]!
        if (length < 0) return
        code.set(address, bytes.subarray(at, at + length))
        at += length
      })
    })
    return { values, head, code, stats, slowestReaderMs }
  }

  async close(): Promise<void> {
    this.fail(new ReaderError({ reason: "reader pool closed" }))
    await Promise.all(
      this.workers.map(
        (worker) =>
          new Promise<void>((resolve) => {
            worker.once("exit", () => resolve())
            worker.postMessage({ _tag: "Stop" } satisfies HostToReader)
            // A thread stuck in a page fault still ends: terminate after a grace period.
            setTimeout(() => void worker.terminate(), 2000).unref()
          })
      )
    )
  }

  private send(worker: Worker, records: ArrayBuffer, count: number, code: ReadonlyArray<Address>): Promise<Done> {
    const id = this.nextId++
    return new Promise<Done>((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      worker.postMessage({ _tag: "Read", id, records, count, code } satisfies HostToReader, [records])
    })
  }

  private fail(error: ReaderError): void {
    this.broken = error
    for (const waiter of this.pending.values()) waiter.reject(error)
    this.pending.clear()
  }
}
