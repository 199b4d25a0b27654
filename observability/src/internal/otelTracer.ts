/**
 * Internal: the Layer that makes Effect's tracer an OpenTelemetry tracer, shared by the live and test layers.
 *
 * Built from `@effect/opentelemetry` pieces rather than `NodeSdk.layer` because that one reads the resource
 * from the ambient ConfigProvider (process.env); here the resource comes from `resolveObservabilityConfig`.
 * The provider is not registered globally (no `provider.register()`): several actors in one process each get
 * their own provider and resource, and nothing leaks between test cases. On scope close the provider is
 * flushed and shut down (bounded by `shutdownTimeout`), so a gracefully exiting process exports its last spans.
 */

import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import * as Resource from "@effect/opentelemetry/Resource"
import * as Tracer from "@effect/opentelemetry/Tracer"
import type { SpanProcessor } from "@opentelemetry/sdk-trace-base"
import type { NonEmptyReadonlyArray } from "effect/Array"
import type * as Duration from "effect/Duration"
import * as Layer from "effect/Layer"
import type { ResourceConfig } from "../config.js"
import { MessagingTracing } from "../messaging.js"

export const otelTracerLayer = (
  resource: ResourceConfig,
  processors: NonEmptyReadonlyArray<SpanProcessor>,
  shutdownTimeout: Duration.DurationInput
): Layer.Layer<never> =>
  Tracer.layerWithoutOtelTracer.pipe(
    Layer.merge(Layer.succeed(MessagingTracing, true)),
    Layer.provide(Tracer.layerTracer),
    Layer.provide(NodeSdk.layerTracerProvider(processors, { shutdownTimeout })),
    Layer.provide(
      Resource.layer({
        serviceName: resource.serviceName,
        ...(resource.serviceVersion === undefined ? {} : { serviceVersion: resource.serviceVersion }),
        attributes: resource.attributes
      })
    )
  )
