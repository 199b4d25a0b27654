/**
 * Segments on Azure Append Blobs (the paper's main storage), tested against Azurite: one append blob per
 * segment, records framed with a checksum (framing.ts), positions being byte offsets. Create is
 * conditional on `If-None-Match: *` (a second create gets 409), an append on the append-position condition
 * (a writer that is not at the tail gets 412) and on the blob's maximum size.
 */
import { type AppendBlobClient, BlobServiceClient, type ContainerClient, RestError } from "@azure/storage-blob"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { FRAME_HEADER_BYTES, frameRecord, unframeRecords } from "./framing.js"
import { DEFAULT_CALL_TIMEOUT_MS, makeSegmentStore, type RawRead } from "./raw-store.js"
import { type SegmentLimits, SegmentStore, type SegmentStoreShape, SegmentUnavailable } from "./segment.js"

export interface AzureSegmentOptions {
  /** A storage connection string (Azurite's: azuriteConnectionString(port)). */
  readonly connectionString: string
  readonly container?: string
  readonly timeoutMs?: number
  /** Bytes of one blob (default 1 GiB; Azure's own limit is ~195 GiB). */
  readonly maxBlobBytes?: number
  /** Bytes read per call when the caller gives no hint. */
  readonly readChunkBytes?: number
}

/** An append block is at most 4 MiB; the frame header takes 8 bytes of it. */
const MAX_BLOCK_BYTES = 4 * 1024 * 1024
/** Azure's limit on the blocks of one append blob. */
const MAX_BLOCKS = 50_000

const statusOf = (e: unknown): number | undefined => (e instanceof RestError ? e.statusCode : undefined)
const codeOf = (e: unknown): string | undefined =>
  e instanceof RestError ? ((e.details as { errorCode?: string } | undefined)?.errorCode ?? e.code) : undefined

/** Azurite's well-known development account (public, documented: it only opens the local emulator). */
export const azuriteConnectionString = (port: number, host = "127.0.0.1"): string =>
  [
    "DefaultEndpointsProtocol=http",
    "AccountName=devstoreaccount1",
    "AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
    `BlobEndpoint=http://${host}:${port}/devstoreaccount1`
  ].join(";")

const collect = async (body: NodeJS.ReadableStream | undefined): Promise<Buffer> => {
  if (body === undefined) return Buffer.alloc(0)
  const chunks: Array<Buffer> = []
  for await (const chunk of body) chunks.push(chunk as Buffer)
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
}

export const makeAzureSegmentStore = (container: ContainerClient, options: AzureSegmentOptions): SegmentStoreShape => {
  const maxBlobBytes = options.maxBlobBytes ?? 1024 * 1024 * 1024
  const limits: SegmentLimits = {
    maxAppendBytes: MAX_BLOCK_BYTES - FRAME_HEADER_BYTES,
    maxRecords: MAX_BLOCKS,
    maxPosition: maxBlobBytes,
    byteAddressed: true
  }
  const readChunkBytes = options.readChunkBytes ?? 1024 * 1024
  const blob = (segment: string): AppendBlobClient => container.getAppendBlobClient(segment)

  const download = async (segment: string, from: number, count: number, signal: AbortSignal) => {
    try {
      const response = await blob(segment).download(from, count, { abortSignal: signal })
      return await collect(response.readableStreamBody)
    } catch (e) {
      // Reading at (or past) the end of a blob: "InvalidRange". An empty result, unless the blob is missing.
      if (statusOf(e) === 416) return Buffer.alloc(0)
      throw e
    }
  }

  const read = async (
    segment: string,
    from: number,
    maxRecords: number,
    bytesHint: number | undefined,
    signal: AbortSignal
  ): Promise<RawRead> => {
    try {
      let count = Math.max(bytesHint ?? readChunkBytes, FRAME_HEADER_BYTES)
      for (;;) {
        const chunk = await download(segment, from, count, signal)
        if (chunk.byteLength === 0 && !(await blob(segment).exists({ abortSignal: signal }))) {
          return { _tag: "NotFound" }
        }
        const got = unframeRecords(chunk, from, maxRecords, limits.maxAppendBytes)
        if (got._tag === "Corrupt") return got
        // Not even one whole record because the range was too short for it: read again, long enough.
        if (got.firstRecordBytes !== undefined && chunk.byteLength === count && got.firstRecordBytes > count) {
          count = got.firstRecordBytes
          continue
        }
        return { _tag: "Records", records: got.records }
      }
    } catch (e) {
      if (statusOf(e) === 404) return { _tag: "NotFound" }
      throw e
    }
  }

  return makeSegmentStore({
    backend: "azure",
    limits,
    timeoutMs: options.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
    raw: {
      create: async (segment, signal) => {
        try {
          await blob(segment).create({ conditions: { ifNoneMatch: "*" }, abortSignal: signal })
          return true
        } catch (e) {
          if (statusOf(e) === 409) return false
          throw e
        }
      },
      append: async (segment, expectedTail, bytes, signal) => {
        const frame = frameRecord(bytes)
        try {
          const r = await blob(segment).appendBlock(frame, frame.byteLength, {
            conditions: { appendPosition: expectedTail, maxSize: maxBlobBytes },
            abortSignal: signal
          })
          const position = Number(r.blobAppendOffset ?? expectedTail)
          return { _tag: "Appended", result: { position, tail: position + frame.byteLength } }
        } catch (e) {
          const code = codeOf(e)
          if (code === "AppendPositionConditionNotMet") return { _tag: "Conflict", actual: undefined }
          if (code === "MaxBlobSizeConditionNotMet" || code === "BlockCountExceedsLimit") {
            return { _tag: "Full", tail: expectedTail }
          }
          if (statusOf(e) === 404) return { _tag: "NotFound" }
          throw e
        }
      },
      read,
      size: async (segment, signal) => {
        try {
          const p = await blob(segment).getProperties({ abortSignal: signal })
          return { _tag: "Size", tail: p.contentLength ?? 0 }
        } catch (e) {
          if (statusOf(e) === 404) return { _tag: "NotFound" }
          throw e
        }
      },
      remove: async (segment, signal) => {
        await blob(segment).deleteIfExists({ abortSignal: signal })
      }
    }
  })
}

/** An append-blob segment store; the container is created if absent. */
export const azureSegmentStore = (
  options: AzureSegmentOptions
): Effect.Effect<SegmentStoreShape, SegmentUnavailable, Scope.Scope> =>
  Effect.gen(function* () {
    const service = BlobServiceClient.fromConnectionString(options.connectionString, {
      // The store retries at its own layer (with its own deadlines); the SDK's retries would hide failures.
      retryOptions: { maxTries: 1 }
    })
    const container = service.getContainerClient(options.container ?? "airdb")
    yield* Effect.tryPromise({
      try: () => container.createIfNotExists(),
      catch: (cause) =>
        new SegmentUnavailable({
          segment: "*",
          operation: `create container ${options.container ?? "airdb"}`,
          reason: String(cause)
        })
    })
    return makeAzureSegmentStore(container, options)
  })

export const azureSegmentLayer = (options: AzureSegmentOptions): Layer.Layer<SegmentStore, SegmentUnavailable> =>
  Layer.scoped(SegmentStore, azureSegmentStore(options))
