/**
 * What every kind of gRPC handler shares: what a handler knows about its call, the runner that forks handler
 * fibers on the server's runtime, the status object grpc-js sends for a failure, and cancel → interrupt.
 */
import type { Metadata as GrpcMetadata } from "@grpc/grpc-js"
import { Metadata } from "@grpc/grpc-js"
import { ErrorCode } from "@reef/proto"
import type * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import { type GrpcStatus, REEF_ERROR_CODE_TRAILER } from "./status.js"

/** What a handler may know about its call besides the request. */
export interface CallInfo {
  /** Full method name without the leading slash, e.g. `reef.v1.Cluster/Ping`. */
  readonly method: string
  readonly metadata: GrpcMetadata
  readonly peer: string
  /** Milliseconds since the epoch by which the client wants an answer; Infinity when it set no deadline. */
  readonly deadlineMs: number
}

/**
 * Forks handler fibers on the server's runtime. Unary calls and streams are kept apart because shutdown
 * treats them differently: streams (e.g. WatchMembership) never end on their own and are interrupted at once,
 * unary calls get the grace period to finish.
 */
export interface CallRunner<R> {
  readonly runUnary: <A, E>(effect: Effect.Effect<A, E, R>) => Fiber.RuntimeFiber<A, E>
  readonly runStream: <A, E>(effect: Effect.Effect<A, E, R>) => Fiber.RuntimeFiber<A, E>
}

/** `/reef.v1.Cluster/Ping` → `reef.v1.Cluster/Ping`. */
export const methodName = (path: string): string => (path.startsWith("/") ? path.slice(1) : path)

export const callInfo = (
  path: string,
  call: { readonly metadata: GrpcMetadata; getPeer(): string; getDeadline(): Date | number }
): CallInfo => {
  const deadline = call.getDeadline()
  return {
    method: methodName(path),
    metadata: call.metadata,
    peer: call.getPeer(),
    deadlineMs: deadline instanceof Date ? deadline.getTime() : deadline
  }
}

/** First string value of a metadata key. */
export const metadataString = (metadata: GrpcMetadata, key: string): string | undefined => {
  const value = metadata.get(key).find((v) => typeof v === "string")
  return typeof value === "string" ? value : undefined
}

/** The grpc-js error object of a status; grpc-js sends `metadata` as trailers. */
export const statusObject = (grpcStatus: GrpcStatus) => {
  const metadata = new Metadata()
  metadata.set(REEF_ERROR_CODE_TRAILER, ErrorCode[grpcStatus.reefCode] ?? String(grpcStatus.reefCode))
  return { code: grpcStatus.code, details: grpcStatus.details, metadata }
}

/** Interrupts a handler when the client cancels or its deadline passes (grpc-js emits `cancelled`). */
export const interruptOnCancel = (
  call: { readonly cancelled: boolean; once(event: "cancelled", listener: () => void): unknown },
  fiber: Fiber.RuntimeFiber<unknown, unknown>
) => {
  const interrupt = () => fiber.unsafeInterruptAsFork(FiberId.none)
  if (call.cancelled) interrupt()
  else call.once("cancelled", interrupt)
}
