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
  const off = (disabledReason: string): ObservabilityConfig => ({ exporters: [], disabledReason, resource, warnings })

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
  return { exporters, resource, warnings }
}

const resolveOtlpUrl = (env: Env, explicit: boolean, warnings: Array<string>): string | undefined => {
  const protocol = read(env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") ?? read(env, "OTEL_EXPORTER_OTLP_PROTOCOL")
  if (protocol !== undefined && protocol !== "http/json") {
    warnings.push(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported; traces are sent as OTLP/HTTP JSON`)
  }
  const tracesEndpoint = read(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
  if (tracesEndpoint !== undefined) return validUrl("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", tracesEndpoint, warnings)
  const endpoint = read(env, "OTEL_EXPORTER_OTLP_ENDPOINT")
  if (endpoint !== undefined) {
    const base = endpoint.endsWith("/") ? endpoint : `${endpoint}/`
    return validUrl("OTEL_EXPORTER_OTLP_ENDPOINT", `${base}${OTLP_TRACES_PATH}`, warnings)
  }
  return explicit ? DEFAULT_OTLP_TRACES_URL : undefined
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
