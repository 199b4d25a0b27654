/**
 * A prefetch reader (App. E.3): a thread of its own, so its page faults block only itself and k readers
 * keep k reads in flight on the device. Each task is read inside one read transaction (a snapshot), in the
 * order given: the plan's key order, a forward walk through each table. The transaction is the thread's
 * own current one, renewed by lmdb-js between event turns (a task runs within one turn): unlike an explicit
 * transaction it lets lmdb-js reuse its cursor across the history-index seeks, half their CPU.
 */
import { parentPort, workerData } from "node:worker_threads"
import { openTables, Source } from "@reef/chain/store"
import { type HostToReader, NO_AS_OF, RECORD_BYTES, type ReaderInit, type ReaderToHost } from "./reader-protocol.js"
import { stateReader } from "./remote-disk.js"

const port = parentPort!
const { path, latencyUs } = workerData as ReaderInit
const tables = openTables({ path, readOnly: true })
const send = (message: ReaderToHost, transfer: Array<ArrayBuffer> = []) => port.postMessage(message, transfer)

port.on("message", (message: HostToReader) => {
  if (message._tag === "Stop") {
    void tables.env.close().finally(() => port.close())
    return
  }
  const started = performance.now()
  try {
    const reader = stateReader(tables, latencyUs)
    const head = reader.head()
    const records = new Uint8Array(message.records)
    const view = new DataView(message.records)
    const values = new Float64Array(message.count)
    let plain = 0
    let changeset = 0
    let zero = 0
    for (let i = 0; i < message.count; i++) {
      const offset = i * RECORD_BYTES
      const source = records[offset + 52]!
      if (source === Source.Plain) {
        values[i] = reader.plainAt(records, offset)
        plain++
      } else if (source === Source.Changeset) {
        const asOf = view.getUint32(offset + 53)
        values[i] = reader.storageAt(records, offset, asOf === NO_AS_OF ? head : asOf, head)
        changeset++
      } else zero++
    }
    const codes = message.code.map((address) => reader.code(address))
    const codeLengths = Int32Array.from(codes, (c) => (c === undefined ? -1 : c.length))
    const codeBytes = new Uint8Array(codes.reduce((s, c) => s + (c?.length ?? 0), 0))
    let at = 0
    for (const c of codes) {
      if (c === undefined) continue
      codeBytes.set(c, at)
      at += c.length
    }
    const stats = { plain, changeset, zero, bytesRead: reader.bytesRead, readMs: performance.now() - started }
    send({ _tag: "Done", id: message.id, values, head, stats, codeBytes: codeBytes.buffer, codeLengths }, [
      values.buffer,
      codeBytes.buffer
    ])
  } catch (error) {
    send({ _tag: "Failed", id: message.id, message: (error as Error).message ?? String(error) })
  }
})
send({ _tag: "Ready" })
