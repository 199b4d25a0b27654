/**
 * What an actor's tracing should do, decided from the standard `OTEL_*` environment variables.
 *
 * Pure (env in, plan out) so every rule is tested without starting an SDK. The rules:
 *   - `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`: no exporter; Effect's built-in tracer stays.
 *   - `OTEL_TRACES_EXPORTER` (default `otlp`, comma-separated list) selects `otlp` and/or `console`.
 *   - `otlp` sends OTLP/HTTP JSON to `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is) or to
 *     `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`. With neither set, the implicit default `otlp` is dropped so a
 *     local run does not log connection errors; an explicit `OTEL_TRACES_EXPORTER=otlp` uses the spec default
 *     `http://localhost:4318/v1/traces`.
 *   - Resource: service name `OTEL_SERVICE_NAME`, else `service.name` from `OTEL_RESOURCE_ATTRIBUTES`, else
 *     `reef-<role>`; the actor's identity (`service.instance.id`, `reef.actor.id`, `reef.role`) always comes
 *     from the code; other `OTEL_RESOURCE_ATTRIBUTES` entries are kept.
 * Metrics (`metrics`): the same rules with `OTEL_METRICS_EXPORTER` (`otlp` or `none`; `prometheus` is always on
 * as the process's own `/metrics` endpoint, so it adds nothing here), `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` or
 * the generic endpoint + `/v1/metrics`, `OTEL_EXPORTER_OTLP_[METRICS_]PROTOCOL` (`http/json` by default, or
 * `http/protobuf`) and `OTEL_METRIC_EXPORT_INTERVAL` (ms, 60000 by default, as the spec says).
 * Variables the SDK itself reads from `process.env` (OTEL_BSP_*, OTEL_TRACES_SAMPLER*, OTEL_EXPORTER_OTLP_HEADERS,
 * _TIMEOUT, _COMPRESSION, certificates) are left to it. Bad values never fail the actor: they become warnings.
 */
import * as Option from "effect/Option"
import { ATTR_REEF_ACTOR_ID, ATTR_REEF_ROLE } from "./attributes.js"

/** Environment variables, e.g. `process.env`. Empty values count as unset (OTel spec). */
export type Env = Readonly<Record<string, string | undefined>>

export const ATTR_SERVICE_NAME = "service.name"
export const ATTR_SERVICE_VERSION = "service.version"
export const ATTR_SERVICE_INSTANCE_ID = "service.instance.id"

/** The OTLP/HTTP path for traces, appended to `OTEL_EXPORTER_OTLP_ENDPOINT`. */
export const OTLP_TRACES_PATH = "v1/traces"
/** Spec default used only when `OTEL_TRACES_EXPORTER=otlp` is explicit and no endpoint is set. */
export const DEFAULT_OTLP_TRACES_URL = "http://localhost:4318/v1/traces"

export type TraceExporterConfig = { readonly _tag: "Otlp"; readonly url: string } | { readonly _tag: "Console" }

/** The OTLP/HTTP path for metrics, appended to `OTEL_EXPORTER_OTLP_ENDPOINT`. */
export const OTLP_METRICS_PATH = "v1/metrics"
/** Spec default used only when `OTEL_METRICS_EXPORTER=otlp` is explicit and no endpoint is set. */
export const DEFAULT_OTLP_METRICS_URL = "http://localhost:4318/v1/metrics"
/** `OTEL_METRIC_EXPORT_INTERVAL`'s default in the spec. */
export const DEFAULT_METRIC_EXPORT_INTERVAL_MS = 60_000

export interface MetricsExportConfig {
  /** Where OTLP metrics go; undefined: no OTLP metrics (the `/metrics` endpoint is separate and always on). */
  readonly otlp?:
    | { readonly url: string; readonly protocol: "http/json" | "http/protobuf"; readonly intervalMs: number }
    | undefined
  readonly disabledReason?: string | undefined
}

export interface ResourceConfig {
  readonly serviceName: string
  readonly serviceVersion?: string | undefined
  /** Everything except service.name / service.version. */
  readonly attributes: Readonly<Record<string, string>>
}

export interface ObservabilityConfig {
  /** Empty: tracing is off (spans stay in-process, nothing is exported, no SDK is started). */
  readonly exporters: ReadonlyArray<TraceExporterConfig>
  /** Why `exporters` is empty, for a startup log line. */
  readonly disabledReason?: string | undefined
  readonly resource: ResourceConfig
  /** OTLP metrics export. */
  readonly metrics: MetricsExportConfig
  /** Problems found in the environment; the layer logs them. */
  readonly warnings: ReadonlyArray<string>
}

export interface ActorIdentity {
  /** Actor role, e.g. "gateway", "nic", "replica": service name is `reef-<role>`. */
  readonly role: string
  /** Actor id: `service.instance.id` and `reef.actor.id`. */
  readonly id: string
  /** `service.version`. */
  readonly version?: string | undefined
}

const read = (env: Env, name: string): string | undefined => {
  const value = env[name]?.trim()
  return value === undefined || value === "" ? undefined : value
}

export const resolveObservabilityConfig = (identity: ActorIdentity, env: Env): ObservabilityConfig => {
  const warnings: Array<string> = []
  const resource = resolveResource(identity, env, warnings)
  const metrics = resolveMetrics(env, warnings)
  const off = (disabledReason: string): ObservabilityConfig => ({
    exporters: [],
    disabledReason,
    resource,
    metrics,
    warnings
  })

  if (read(env, "OTEL_SDK_DISABLED")?.toLowerCase() === "true") return off("OTEL_SDK_DISABLED=true")

  const selection = read(env, "OTEL_TRACES_EXPORTER")
  const names =
    selection === undefined
      ? ["otlp"]
      : selection
          .toLowerCase()
          .split(",")
          .map((name) => name.trim())
  if (names.includes("none")) return off("OTEL_TRACES_EXPORTER=none")

  const exporters: Array<TraceExporterConfig> = []
  let missingEndpoint = false
  for (const name of new Set(names)) {
    if (name === "console") {
      exporters.push({ _tag: "Console" })
    } else if (name === "otlp") {
      const url = resolveOtlpUrl(env, selection !== undefined, warnings)
      if (url === undefined) missingEndpoint = true
      else exporters.push({ _tag: "Otlp", url })
    } else if (name !== "") {
      warnings.push(`OTEL_TRACES_EXPORTER: exporter "${name}" is not supported (use otlp, console or none); ignored`)
    }
  }
  if (exporters.length === 0) {
    return off(missingEndpoint ? "no OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" : "no exporter")
  }
  return { exporters, resource, metrics, warnings }
}

const resolveMetrics = (env: Env, warnings: Array<string>): MetricsExportConfig => {
  if (read(env, "OTEL_SDK_DISABLED")?.toLowerCase() === "true") return { disabledReason: "OTEL_SDK_DISABLED=true" }
  const selection = read(env, "OTEL_METRICS_EXPORTER")
  const names = new Set(
    (selection ?? "otlp")
      .toLowerCase()
      .split(",")
      .map((name) => name.trim())
  )
  for (const name of names) {
    if (!["otlp", "none", "prometheus", ""].includes(name)) {
      warnings.push(`OTEL_METRICS_EXPORTER: exporter "${name}" is not supported (use otlp or none); ignored`)
    }
  }
  if (names.has("none") || !names.has("otlp")) return { disabledReason: `OTEL_METRICS_EXPORTER=${selection}` }
  const url = resolveEndpoint(env, "METRICS", OTLP_METRICS_PATH, warnings)
  const given = read(env, "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") ?? read(env, "OTEL_EXPORTER_OTLP_ENDPOINT")
  const chosen = url ?? (selection !== undefined && given === undefined ? DEFAULT_OTLP_METRICS_URL : undefined)
  if (chosen === undefined)
    return { disabledReason: "no OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_METRICS_ENDPOINT" }
  const protocol = read(env, "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL") ?? read(env, "OTEL_EXPORTER_OTLP_PROTOCOL")
  if (protocol !== undefined && protocol !== "http/json" && protocol !== "http/protobuf") {
    warnings.push(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported for metrics; sent as OTLP/HTTP JSON`)
  }
  const rawInterval = read(env, "OTEL_METRIC_EXPORT_INTERVAL")
  const interval = rawInterval === undefined ? DEFAULT_METRIC_EXPORT_INTERVAL_MS : Number(rawInterval)
  const intervalMs = Number.isFinite(interval) && interval > 0 ? interval : DEFAULT_METRIC_EXPORT_INTERVAL_MS
  if (intervalMs !== interval) {
    warnings.push(`OTEL_METRIC_EXPORT_INTERVAL=${rawInterval} is not a positive number of ms; using ${intervalMs}`)
  }
  return { otlp: { url: chosen, protocol: protocol === "http/protobuf" ? "http/protobuf" : "http/json", intervalMs } }
}

/** `OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT` as is, else the generic endpoint plus the signal's path. */
const resolveEndpoint = (env: Env, signal: string, path: string, warnings: Array<string>): string | undefined => {
  const specific = read(env, `OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`)
  if (specific !== undefined) return validUrl(`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`, specific, warnings)
  const endpoint = read(env, "OTEL_EXPORTER_OTLP_ENDPOINT")
  if (endpoint === undefined) return undefined
  const base = endpoint.endsWith("/") ? endpoint : `${endpoint}/`
  return validUrl("OTEL_EXPORTER_OTLP_ENDPOINT", `${base}${path}`, warnings)
}

const resolveOtlpUrl = (env: Env, explicit: boolean, warnings: Array<string>): string | undefined => {
  const protocol = read(env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") ?? read(env, "OTEL_EXPORTER_OTLP_PROTOCOL")
  if (protocol !== undefined && protocol !== "http/json") {
    warnings.push(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported; traces are sent as OTLP/HTTP JSON`)
  }
  const url = resolveEndpoint(env, "TRACES", OTLP_TRACES_PATH, warnings)
  if (url !== undefined) return url
  const given = read(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") ?? read(env, "OTEL_EXPORTER_OTLP_ENDPOINT")
  return explicit && given === undefined ? DEFAULT_OTLP_TRACES_URL : undefined
}

const validUrl = (name: string, url: string, warnings: Array<string>): string | undefined => {
  const parsed = URL.canParse(url) ? new URL(url) : undefined
  if (parsed === undefined || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    warnings.push(`${name}: "${url}" is not an http(s) URL; OTLP export disabled`)
    return undefined
  }
  return parsed.toString()
}

const resolveResource = (identity: ActorIdentity, env: Env, warnings: Array<string>): ResourceConfig => {
  const fromEnv = parseResourceAttributes(read(env, "OTEL_RESOURCE_ATTRIBUTES"), warnings)
  const { [ATTR_SERVICE_NAME]: envServiceName, [ATTR_SERVICE_VERSION]: envServiceVersion, ...attributes } = fromEnv
  const serviceVersion = identity.version ?? envServiceVersion
  return {
    serviceName: read(env, "OTEL_SERVICE_NAME") ?? envServiceName ?? `reef-${identity.role}`,
    ...(serviceVersion === undefined ? {} : { serviceVersion }),
    attributes: {
      ...attributes,
      [ATTR_SERVICE_INSTANCE_ID]: identity.id,
      [ATTR_REEF_ACTOR_ID]: identity.id,
      [ATTR_REEF_ROLE]: identity.role
    }
  }
}

/**
 * `OTEL_RESOURCE_ATTRIBUTES`: `key1=value1,key2=value2` with percent-encoded values (W3C Baggage octets).
 * Per the OTel spec, a value that cannot be decoded discards the whole variable.
 */
export const parseResourceAttributes = (
  raw: string | undefined,
  warnings: Array<string> = []
): Record<string, string> => {
  if (raw === undefined) return {}
  const attributes: Record<string, string> = {}
  for (const entry of raw.split(",")) {
    if (entry.trim() === "") continue
    const separator = entry.indexOf("=")
    const key = separator < 0 ? "" : entry.slice(0, separator).trim()
    const value = separator < 0 ? undefined : decodePercent(entry.slice(separator + 1).trim())
    if (key === "" || value === undefined) {
      warnings.push(`OTEL_RESOURCE_ATTRIBUTES: cannot parse "${entry}"; the variable is ignored`)
      return {}
    }
    attributes[key] = value
  }
  return attributes
}

/** `decodeURIComponent` as an Option: it throws on malformed escapes and invalid UTF-8. */
const decodePercent = (value: string): string | undefined =>
  Option.getOrUndefined(Option.liftThrowable(decodeURIComponent)(value))
