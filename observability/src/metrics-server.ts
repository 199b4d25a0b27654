/**
 * The `/metrics` endpoint of an actor process: Effect's metric registry (every actor's kernel counters, the
 * role's own metrics) in Prometheus's text format, plus the process's memory and CPU under their standard
 * names. One per process; its URL is announced in presence so Prometheus (through `reef up`'s target file)
 * and `reef status` find it.
 *
 * The process gauges are read when scraped (and when OTLP export takes a snapshot, see `sampleProcessMetrics`):
 * no timer runs in an idle actor for them.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import { PROMETHEUS_CONTENT_TYPE, prometheusText } from "./prometheus.js"

export class MetricsServerError extends Data.TaggedError("MetricsServerError")<{
  readonly host: string
  readonly port: number
  readonly reason: string
}> {
  override get message() {
    return `cannot serve /metrics on ${this.host}:${this.port}: ${this.reason}`
  }
}

export interface MetricsServerOptions {
  /** Defaults to 127.0.0.1. */
  readonly host?: string
  /** 0 (the default) picks a free port. */
  readonly port?: number
  /** Labels on every series (e.g. nothing: Prometheus adds `instance` and the target's labels). */
  readonly constantLabels?: Readonly<Record<string, string>>
}

export interface MetricsServer {
  /** `http://host:port/metrics`. */
  readonly url: string
  readonly port: number
}

const residentMemory = Metric.gauge("process_resident_memory_bytes", {
  description: "Resident set size of the process in bytes"
})
const heapUsed = Metric.gauge("nodejs_heap_used_bytes", { description: "V8 heap in use, in bytes" })
const cpuSeconds = Metric.counter("process_cpu_seconds_total", {
  description: "User and system CPU time of the process, in seconds",
  incremental: true
})
let cpuSecondsCounted = 0
const startTime = Metric.gauge("process_start_time_seconds", {
  description: "Start of the process since the Unix epoch, in seconds"
})
const startedAtSeconds = (Date.now() - process.uptime() * 1000) / 1000

/** Reads the process gauges into the registry (a scrape or an OTLP export then sees fresh values). */
export const sampleProcessMetrics = (): void => {
  const cpu = process.cpuUsage()
  residentMemory.unsafeUpdate(process.memoryUsage.rss(), [])
  heapUsed.unsafeUpdate(process.memoryUsage().heapUsed, [])
  // A counter only adds: add what was used since the last sample.
  const used = (cpu.user + cpu.system) / 1e6
  cpuSeconds.unsafeUpdate(used - cpuSecondsCounted, [])
  cpuSecondsCounted = used
  startTime.unsafeUpdate(startedAtSeconds, [])
}

/** The page a scrape gets now. */
export const metricsPage = (constantLabels: Readonly<Record<string, string>> = {}): string => {
  sampleProcessMetrics()
  return prometheusText(Metric.unsafeSnapshot(), constantLabels)
}

/** Serves `/metrics` until the scope closes. */
export const serveMetrics = (options: MetricsServerOptions = {}) => {
  const host = options.host ?? "127.0.0.1"
  const port = options.port ?? 0
  return Effect.acquireRelease(
    Effect.async<{ server: Server; info: MetricsServer }, MetricsServerError>((resume) => {
      const server = createServer((request, response) => {
        const path = (request.url ?? "/").split("?")[0]
        if (request.method !== "GET" && request.method !== "HEAD") {
          response.writeHead(405, { allow: "GET, HEAD" }).end()
        } else if (path === "/metrics") {
          const page = metricsPage(options.constantLabels)
          response.writeHead(200, { "content-type": PROMETHEUS_CONTENT_TYPE })
          response.end(request.method === "HEAD" ? undefined : page)
        } else {
          response.writeHead(404, { "content-type": "text/plain" }).end("not found: metrics are on /metrics\n")
        }
      })
      // Scrapes are rare and small: don't let an idle keep-alive connection hold the process open at exit.
      server.keepAliveTimeout = 5_000
      server.once("error", (error: NodeJS.ErrnoException) =>
        resume(Effect.fail(new MetricsServerError({ host, port, reason: error.code ?? error.message })))
      )
      server.listen(port, host, () => {
        const bound = (server.address() as AddressInfo).port
        const shown = host.includes(":") ? `[${host}]` : host
        resume(Effect.succeed({ server, info: { url: `http://${shown}:${bound}/metrics`, port: bound } }))
      })
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
        server.closeAllConnections()
      })
  ).pipe(Effect.map(({ info }) => info))
}
