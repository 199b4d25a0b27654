/**
 * A minimal OTLP/HTTP trace and metrics receiver for tests: proves that spans and metrics really leave a
 * process over the wire.
 *
 * `node:http` on 127.0.0.1, random port. Accepts `POST /v1/traces` in the OTLP/HTTP JSON encoding (what
 * `@opentelemetry/exporter-trace-otlp-http` sends: hex ids, string or number ints; base64 ids as written by
 * protobuf-JSON encoders are accepted too and normalised to lowercase hex), optionally gzip-compressed.
 * `POST /v1/metrics` takes OTLP/HTTP JSON metrics and records each data point with its metric's name.
 * Protobuf bodies get 415 with an explanation. Point an exporter at it with
 * `OTEL_EXPORTER_OTLP_ENDPOINT=<url>` (exporters append `/v1/traces` and `/v1/metrics`).
 */
import * as http from "node:http"
import * as zlib from "node:zlib"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as Tracer from "effect/Tracer"

export type AttributeValue = string | number | boolean

/** Span kind as Effect names it, plus "unspecified" (OTLP kind 0). */
export type ReceivedSpanKind = Tracer.SpanKind | "unspecified"

export interface ReceivedSpan {
  /** 32 lowercase hex digits. */
  readonly traceId: string
  /** 16 lowercase hex digits. */
  readonly spanId: string
  /** 16 lowercase hex digits; undefined for a root span. */
  readonly parentSpanId: string | undefined
  readonly name: string
  readonly kind: ReceivedSpanKind
  /** `service.name` of the span's resource. */
  readonly serviceName: string | undefined
  /** Span attributes; arrays and maps are JSON-encoded strings, bytes are base64. */
  readonly attributes: Readonly<Record<string, AttributeValue>>
  /** Resource attributes (service.name, service.instance.id, reef.role, ...). */
  readonly resourceAttributes: Readonly<Record<string, AttributeValue>>
  /** Links to other spans (e.g. a KV Set's server span to the consensus instance that decided it). */
  readonly links: ReadonlyArray<{ readonly traceId: string; readonly spanId: string }>
}

/** One data point of an exported metric. */
export interface ReceivedMetricPoint {
  readonly name: string
  /** `sum`, `gauge`, `histogram`, `exponentialHistogram` or `summary`. */
  readonly kind: string
  readonly serviceName: string | undefined
  readonly attributes: Readonly<Record<string, AttributeValue>>
  /** A sum's or gauge's value; a histogram's or summary's count. */
  readonly value: number
}

export interface OtlpReceiver {
  /** Base URL, e.g. `http://127.0.0.1:43123`: the value for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  readonly url: string
  /** Full traces URL: the value for `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`. */
  readonly tracesUrl: string
  /** Spans received so far, in arrival order. */
  readonly spans: Effect.Effect<ReadonlyArray<ReceivedSpan>>
  /** Full metrics URL: the value for `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`. */
  readonly metricsUrl: string
  /** Metric data points received so far, in arrival order. */
  readonly metrics: Effect.Effect<ReadonlyArray<ReceivedMetricPoint>>
  /** Waits until the data points received so far satisfy `predicate` (no timeout of its own). */
  readonly waitForMetrics: (
    predicate: (points: ReadonlyArray<ReceivedMetricPoint>) => boolean
  ) => Effect.Effect<ReadonlyArray<ReceivedMetricPoint>>
  /** Number of export requests answered 200 so far. */
  readonly requests: Effect.Effect<number>
  /**
   * Waits until the spans received so far satisfy `predicate` and returns them. It does not time out by itself:
   * add `Effect.timeout` (under `TestClock`, use a live clock for that).
   */
  readonly waitForSpans: (
    predicate: (spans: ReadonlyArray<ReceivedSpan>) => boolean
  ) => Effect.Effect<ReadonlyArray<ReceivedSpan>>
}

export class OtlpReceiverError extends Schema.TaggedError<OtlpReceiverError>()("OtlpReceiverError", {
  message: Schema.String,
  cause: Schema.Defect
}) {}

export interface OtlpReceiverOptions {
  /** Largest accepted request body, after decompression; default 16 MiB. */
  readonly maxBodyBytes?: number | undefined
}

export const OTLP_TRACES_PATH = "/v1/traces"
export const OTLP_METRICS_PATH = "/v1/metrics"
const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024

// ---------------------------------------------------------------------------------------------------------------
// OTLP JSON shapes (only the fields the receiver records; unknown fields are ignored)
// ---------------------------------------------------------------------------------------------------------------

const KeyValue = Schema.Struct({ key: Schema.String, value: Schema.optional(Schema.Unknown) })
const OtlpSpan = Schema.Struct({
  traceId: Schema.String,
  spanId: Schema.String,
  parentSpanId: Schema.optional(Schema.String),
  name: Schema.String,
  kind: Schema.optional(Schema.Union(Schema.Number, Schema.String)),
  attributes: Schema.optional(Schema.Array(KeyValue)),
  links: Schema.optional(Schema.Array(Schema.Struct({ traceId: Schema.String, spanId: Schema.String })))
})
const ExportTraceServiceRequest = Schema.Struct({
  resourceSpans: Schema.optional(
    Schema.Array(
      Schema.Struct({
        resource: Schema.optional(Schema.Struct({ attributes: Schema.optional(Schema.Array(KeyValue)) })),
        scopeSpans: Schema.optional(Schema.Array(Schema.Struct({ spans: Schema.optional(Schema.Array(OtlpSpan)) })))
      })
    )
  )
})
const decodeRequest = Schema.decodeUnknownEither(Schema.parseJson(ExportTraceServiceRequest))

const NumberLike = Schema.Union(Schema.Number, Schema.String)
const DataPoint = Schema.Struct({
  attributes: Schema.optional(Schema.Array(KeyValue)),
  asInt: Schema.optional(NumberLike),
  asDouble: Schema.optional(NumberLike),
  count: Schema.optional(NumberLike)
})
const DataPoints = Schema.optional(Schema.Struct({ dataPoints: Schema.optional(Schema.Array(DataPoint)) }))
const OtlpMetric = Schema.Struct({
  name: Schema.String,
  sum: DataPoints,
  gauge: DataPoints,
  histogram: DataPoints,
  exponentialHistogram: DataPoints,
  summary: DataPoints
})
const ExportMetricsServiceRequest = Schema.Struct({
  resourceMetrics: Schema.optional(
    Schema.Array(
      Schema.Struct({
        resource: Schema.optional(Schema.Struct({ attributes: Schema.optional(Schema.Array(KeyValue)) })),
        scopeMetrics: Schema.optional(
          Schema.Array(Schema.Struct({ metrics: Schema.optional(Schema.Array(OtlpMetric)) }))
        )
      })
    )
  )
})
const decodeMetricsRequest = Schema.decodeUnknownEither(Schema.parseJson(ExportMetricsServiceRequest))
const METRIC_KINDS = ["sum", "gauge", "histogram", "exponentialHistogram", "summary"] as const

/** Decodes one OTLP/HTTP JSON metrics export request body into data points, or explains why it cannot. */
export const decodeMetricsExportRequest = (body: string): Either.Either<ReadonlyArray<ReceivedMetricPoint>, string> =>
  Either.map(Either.mapLeft(decodeMetricsRequest(body), ParseResult.TreeFormatter.formatErrorSync), (request) => {
    const points: Array<ReceivedMetricPoint> = []
    for (const resourceMetrics of request.resourceMetrics ?? []) {
      const serviceName = decodeAttributes(resourceMetrics.resource?.attributes)["service.name"]
      for (const scopeMetrics of resourceMetrics.scopeMetrics ?? []) {
        for (const metric of scopeMetrics.metrics ?? []) {
          for (const kind of METRIC_KINDS) {
            for (const point of metric[kind]?.dataPoints ?? []) {
              points.push({
                name: metric.name,
                kind,
                serviceName: serviceName === undefined ? undefined : String(serviceName),
                attributes: decodeAttributes(point.attributes),
                value: Number(point.asInt ?? point.asDouble ?? point.count ?? Number.NaN)
              })
            }
          }
        }
      }
    }
    return points
  })

const KINDS: ReadonlyArray<ReceivedSpanKind> = ["unspecified", "internal", "server", "client", "producer", "consumer"]

const decodeKind = (kind: number | string | undefined): ReceivedSpanKind => {
  if (kind === undefined) return "unspecified"
  if (typeof kind === "number") return KINDS[kind] ?? "unspecified"
  const name = kind.replace(/^SPAN_KIND_/, "").toLowerCase()
  return KINDS.find((candidate) => candidate === name) ?? "unspecified"
}

/** OTLP JSON ids: hex per the OTLP spec, base64 from generic protobuf-JSON encoders. */
const decodeId = (id: string, byteLength: number): string | undefined => {
  if (id.length === byteLength * 2 && /^[0-9a-fA-F]+$/.test(id)) return id.toLowerCase()
  const bytes = Buffer.from(id, "base64")
  return bytes.length === byteLength && bytes.toString("base64").replace(/=+$/, "") === id.replace(/=+$/, "")
    ? bytes.toString("hex")
    : undefined
}

const decodeAnyValue = (value: unknown): unknown => {
  if (typeof value !== "object" || value === null) return undefined
  const v = value as Record<string, any>
  if ("stringValue" in v) return String(v.stringValue)
  if ("boolValue" in v) return Boolean(v.boolValue)
  if ("intValue" in v) return Number(v.intValue)
  if ("doubleValue" in v) return Number(v.doubleValue)
  if ("bytesValue" in v) return String(v.bytesValue)
  if ("arrayValue" in v) return ((v.arrayValue?.values ?? []) as Array<unknown>).map(decodeAnyValue)
  if ("kvlistValue" in v) {
    return Object.fromEntries(
      ((v.kvlistValue?.values ?? []) as Array<{ key: string; value: unknown }>).map((kv) => [
        kv.key,
        decodeAnyValue(kv.value)
      ])
    )
  }
  return undefined
}

const decodeAttributes = (
  attributes: ReadonlyArray<{ readonly key: string; readonly value?: unknown }> | undefined
): Record<string, AttributeValue> => {
  const result: Record<string, AttributeValue> = {}
  for (const { key, value } of attributes ?? []) {
    const decoded = decodeAnyValue(value)
    if (decoded === undefined) continue
    result[key] =
      typeof decoded === "string" || typeof decoded === "number" || typeof decoded === "boolean"
        ? decoded
        : JSON.stringify(decoded)
  }
  return result
}

/** Decodes one OTLP/HTTP JSON export request body into spans, or explains why it cannot. */
export const decodeExportRequest = (body: string): Either.Either<ReadonlyArray<ReceivedSpan>, string> =>
  Either.flatMap(Either.mapLeft(decodeRequest(body), ParseResult.TreeFormatter.formatErrorSync), (request) => {
    const spans: Array<ReceivedSpan> = []
    for (const resourceSpans of request.resourceSpans ?? []) {
      const resourceAttributes = decodeAttributes(resourceSpans.resource?.attributes)
      const serviceName = resourceAttributes["service.name"]
      for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
        for (const span of scopeSpans.spans ?? []) {
          const traceId = decodeId(span.traceId, 16)
          const spanId = decodeId(span.spanId, 8)
          const parentSpanId =
            span.parentSpanId === undefined || span.parentSpanId === "" ? undefined : decodeId(span.parentSpanId, 8)
          const links = (span.links ?? []).map((link) => ({
            traceId: decodeId(link.traceId, 16),
            spanId: decodeId(link.spanId, 8)
          }))
          if (
            traceId === undefined ||
            spanId === undefined ||
            (span.parentSpanId && parentSpanId === undefined) ||
            links.some((link) => link.traceId === undefined || link.spanId === undefined)
          ) {
            return Either.left(`span "${span.name}": ids must be hex (or base64) of 16/8 bytes`)
          }
          spans.push({
            traceId,
            spanId,
            parentSpanId,
            name: span.name,
            kind: decodeKind(span.kind),
            serviceName: serviceName === undefined ? undefined : String(serviceName),
            attributes: decodeAttributes(span.attributes),
            resourceAttributes,
            links: links as ReadonlyArray<{ readonly traceId: string; readonly spanId: string }>
          })
        }
      }
    }
    return Either.right(spans)
  })

// ---------------------------------------------------------------------------------------------------------------
// HTTP server
// ---------------------------------------------------------------------------------------------------------------

interface Reply {
  readonly status: number
  readonly body: string
}

const reply = (status: number, message?: string): Reply => ({
  status,
  body: message === undefined ? "{}" : JSON.stringify({ code: status, message })
})

const mediaType = (header: string | undefined): string => (header ?? "").split(";")[0]!.trim().toLowerCase()

const PROTOBUF_TYPES = new Set(["application/x-protobuf", "application/protobuf"])

/** Headers-only checks, before reading the body. */
const checkRequest = (request: http.IncomingMessage): Reply | undefined => {
  const path = (request.url ?? "").split("?")[0]
  if (path !== OTLP_TRACES_PATH && path !== OTLP_METRICS_PATH) {
    return reply(404, `only ${OTLP_TRACES_PATH} and ${OTLP_METRICS_PATH} are served`)
  }
  if (request.method !== "POST") return reply(405, "use POST")
  const type = mediaType(request.headers["content-type"])
  if (PROTOBUF_TYPES.has(type)) {
    return reply(
      415,
      "this test receiver decodes only the OTLP/HTTP JSON encoding; send Content-Type: application/json " +
        "(OTEL_EXPORTER_OTLP_PROTOCOL=http/json)"
    )
  }
  if (type !== "application/json") return reply(415, `unsupported Content-Type "${type}"; use application/json`)
  const encoding = (request.headers["content-encoding"] ?? "identity").toLowerCase()
  if (encoding !== "identity" && encoding !== "gzip") return reply(415, `unsupported Content-Encoding "${encoding}"`)
  return undefined
}

const readBody = (request: http.IncomingMessage, maxBodyBytes: number, onResult: (body: Buffer | Reply) => void) => {
  let done = false
  const onBody = (body: Buffer | Reply) => {
    if (done) return
    done = true
    onResult(body)
  }
  const chunks: Array<Buffer> = []
  let size = 0
  let tooLarge = false
  request.on("data", (chunk: Buffer) => {
    size += chunk.length
    if (size > maxBodyBytes) tooLarge = true
    else chunks.push(chunk)
  })
  request.on("error", () => onBody(reply(400, "request aborted")))
  request.on("end", () => {
    if (tooLarge) return onBody(reply(413, `body larger than ${maxBodyBytes} bytes`))
    const body = Buffer.concat(chunks)
    if (request.headers["content-encoding"]?.toLowerCase() !== "gzip") return onBody(body)
    zlib.gunzip(body, { maxOutputLength: maxBodyBytes }, (error, inflated) =>
      onBody(error === null ? inflated : reply(400, `bad gzip body: ${error.message}`))
    )
  })
}

/**
 * Starts a receiver for the current scope; the server closes (dropping open connections) when the scope closes.
 */
export const startOtlpReceiver = (
  options: OtlpReceiverOptions = {}
): Effect.Effect<OtlpReceiver, OtlpReceiverError, Scope.Scope> => {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  const received: Array<ReceivedSpan> = []
  const receivedMetrics: Array<ReceivedMetricPoint> = []
  const waiters = new Set<() => void>()
  let requests = 0

  const onRequest = (request: http.IncomingMessage, response: http.ServerResponse) => {
    const send = ({ status, body }: Reply) => {
      response.writeHead(status, { "Content-Type": "application/json" }).end(body)
    }
    const rejected = checkRequest(request)
    if (rejected !== undefined) {
      request.resume()
      return send(rejected)
    }
    readBody(request, maxBodyBytes, (body) => {
      if (!Buffer.isBuffer(body)) return send(body)
      const accept = <A>(decoded: Either.Either<ReadonlyArray<A>, string>, into: Array<A>) =>
        Either.match(decoded, {
          onLeft: (message) => send(reply(400, `invalid OTLP JSON: ${message}`)),
          onRight: (items) => {
            into.push(...items)
            requests += 1
            send(reply(200))
            for (const wake of waiters) wake()
          }
        })
      const text = body.toString("utf8")
      if ((request.url ?? "").split("?")[0] === OTLP_METRICS_PATH)
        accept(decodeMetricsExportRequest(text), receivedMetrics)
      else accept(decodeExportRequest(text), received)
    })
  }

  const listen = Effect.async<http.Server, OtlpReceiverError>((resume) => {
    const server = http.createServer(onRequest)
    server.once("error", (cause) =>
      resume(Effect.fail(new OtlpReceiverError({ message: "OTLP receiver could not listen on 127.0.0.1", cause })))
    )
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    return Effect.sync(() => server.close())
  })

  const close = (server: http.Server) =>
    Effect.async<void>((resume) => {
      server.close(() => resume(Effect.void))
      server.closeAllConnections()
    })

  const waitFor =
    <A>(items: Array<A>) =>
    (predicate: (items: ReadonlyArray<A>) => boolean) =>
      Effect.async<ReadonlyArray<A>>((resume) => {
        const check = () => {
          if (!predicate(items)) return
          waiters.delete(check)
          resume(Effect.succeed(items.slice()))
        }
        waiters.add(check)
        check()
        return Effect.sync(() => waiters.delete(check))
      })

  return Effect.acquireRelease(listen, close).pipe(
    Effect.map((server): OtlpReceiver => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      const url = `http://127.0.0.1:${port}`
      return {
        url,
        tracesUrl: `${url}${OTLP_TRACES_PATH}`,
        metricsUrl: `${url}${OTLP_METRICS_PATH}`,
        spans: Effect.sync(() => received.slice()),
        metrics: Effect.sync(() => receivedMetrics.slice()),
        requests: Effect.sync(() => requests),
        waitForSpans: waitFor(received),
        waitForMetrics: waitFor(receivedMetrics)
      }
    })
  )
}
