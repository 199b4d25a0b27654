import { describe, expect, it } from "@effect/vitest"
import {
  DEFAULT_OTLP_METRICS_URL,
  DEFAULT_OTLP_TRACES_URL,
  parseResourceAttributes,
  resolveObservabilityConfig
} from "./config.js"

const actor = { role: "gateway", id: "gw-1", version: "1.2.3" }

describe("resolveObservabilityConfig", () => {
  it("is off without an endpoint, so a default local run exports nothing", () => {
    const config = resolveObservabilityConfig(actor, {})
    expect(config.exporters).toEqual([])
    expect(config.disabledReason).toContain("OTEL_EXPORTER_OTLP_ENDPOINT")
    expect(config.warnings).toEqual([])
  })

  it("appends /v1/traces to OTEL_EXPORTER_OTLP_ENDPOINT", () => {
    for (const endpoint of ["http://collector:4318", "http://collector:4318/"]) {
      expect(resolveObservabilityConfig(actor, { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }).exporters).toEqual([
        { _tag: "Otlp", url: "http://collector:4318/v1/traces" }
      ])
    }
  })

  it("uses OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is, in preference to the generic one", () => {
    const config = resolveObservabilityConfig(actor, {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://b:9999/custom"
    })
    expect(config.exporters).toEqual([{ _tag: "Otlp", url: "http://b:9999/custom" }])
  })

  it("OTEL_SDK_DISABLED=true wins over everything", () => {
    const config = resolveObservabilityConfig(actor, {
      OTEL_SDK_DISABLED: "TRUE",
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318",
      OTEL_TRACES_EXPORTER: "console"
    })
    expect(config.exporters).toEqual([])
    expect(config.disabledReason).toBe("OTEL_SDK_DISABLED=true")
  })

  it("selects the console exporter without an endpoint", () => {
    expect(resolveObservabilityConfig(actor, { OTEL_TRACES_EXPORTER: "console" }).exporters).toEqual([
      { _tag: "Console" }
    ])
  })

  it("supports a list, none, and an explicit otlp with the spec default endpoint", () => {
    expect(resolveObservabilityConfig(actor, { OTEL_TRACES_EXPORTER: "otlp, console" }).exporters).toEqual([
      { _tag: "Otlp", url: DEFAULT_OTLP_TRACES_URL },
      { _tag: "Console" }
    ])
    expect(
      resolveObservabilityConfig(actor, { OTEL_TRACES_EXPORTER: "none", OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318" })
        .exporters
    ).toEqual([])
  })

  it("warns about what it cannot honour instead of failing", () => {
    const config = resolveObservabilityConfig(actor, {
      OTEL_TRACES_EXPORTER: "zipkin,otlp",
      OTEL_EXPORTER_OTLP_ENDPOINT: "not a url",
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc"
    })
    expect(config.exporters).toEqual([])
    // zipkin, the traces URL, grpc; then the metrics URL.
    expect(config.warnings).toHaveLength(4)
  })

  it("exports metrics over OTLP with the same endpoint rules, every 60 s unless told", () => {
    expect(resolveObservabilityConfig(actor, {}).metrics.otlp).toBeUndefined()
    expect(resolveObservabilityConfig(actor, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" }).metrics.otlp).toEqual({
      url: "http://c:4318/v1/metrics",
      protocol: "http/json",
      intervalMs: 60_000
    })
    expect(
      resolveObservabilityConfig(actor, {
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "http://m:9000/in",
        OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "http/protobuf",
        OTEL_METRIC_EXPORT_INTERVAL: "5000"
      }).metrics.otlp
    ).toEqual({ url: "http://m:9000/in", protocol: "http/protobuf", intervalMs: 5000 })
    expect(resolveObservabilityConfig(actor, { OTEL_METRICS_EXPORTER: "otlp" }).metrics.otlp?.url).toBe(
      DEFAULT_OTLP_METRICS_URL
    )
    const off = resolveObservabilityConfig(actor, {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_METRICS_EXPORTER: "none"
    })
    expect(off.metrics.otlp).toBeUndefined()
    expect(off.exporters).toHaveLength(1)
    const badInterval = resolveObservabilityConfig(actor, {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_METRIC_EXPORT_INTERVAL: "soon"
    })
    expect(badInterval.metrics.otlp?.intervalMs).toBe(60_000)
    expect(badInterval.warnings[0]).toContain("OTEL_METRIC_EXPORT_INTERVAL")
  })

  it("treats empty values as unset", () => {
    const config = resolveObservabilityConfig(actor, { OTEL_EXPORTER_OTLP_ENDPOINT: "", OTEL_SERVICE_NAME: " " })
    expect(config.exporters).toEqual([])
    expect(config.resource.serviceName).toBe("reef-gateway")
  })

  it("names the service reef-<role> and records the actor identity", () => {
    expect(resolveObservabilityConfig(actor, {}).resource).toEqual({
      serviceName: "reef-gateway",
      serviceVersion: "1.2.3",
      attributes: { "service.instance.id": "gw-1", "reef.actor.id": "gw-1", "reef.role": "gateway" }
    })
  })

  it("merges OTEL_RESOURCE_ATTRIBUTES and honours OTEL_SERVICE_NAME, keeping the actor identity", () => {
    const resource = resolveObservabilityConfig(
      { role: "nic", id: "nic-7" },
      {
        OTEL_SERVICE_NAME: "custom",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=dev,service.name=ignored,reef.role=spoofed,service.version=9"
      }
    ).resource
    expect(resource).toEqual({
      serviceName: "custom",
      serviceVersion: "9",
      attributes: {
        "deployment.environment": "dev",
        "service.instance.id": "nic-7",
        "reef.actor.id": "nic-7",
        "reef.role": "nic"
      }
    })
    expect(
      resolveObservabilityConfig(actor, { OTEL_RESOURCE_ATTRIBUTES: "service.name=from-attrs" }).resource.serviceName
    ).toBe("from-attrs")
  })
})

describe("parseResourceAttributes", () => {
  it("percent-decodes values", () => {
    expect(parseResourceAttributes("a=1, b = x%20y%2Cz ,c=%C3%A9")).toEqual({ a: "1", b: "x y,z", c: "é" })
  })

  it("discards the whole variable on a malformed entry, with a warning", () => {
    const warnings: Array<string> = []
    expect(parseResourceAttributes("a=1,broken", warnings)).toEqual({})
    expect(parseResourceAttributes("a=%ZZ", warnings)).toEqual({})
    expect(warnings).toHaveLength(2)
  })
})
