/**
 * `reef.v1.Cluster/WatchMembership` as an Effect Stream: its own module (and the `@reef/gateway/watch` subpath)
 * because Stream is a large part of Effect to load, and the unary calls (`reef status`) need none of it.
 */
import { type ServiceError, status } from "@grpc/grpc-js"
import type { MembershipEvent } from "@reef/proto"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { callError, clusterClient, type GatewayCallError, traceMetadata } from "./client.js"

/** How many membership events may wait for the consumer before the gRPC stream is paused. */
const WATCH_BUFFER = 256

/** The current members, then every change, until the consumer stops or the gateway ends the stream. */
export const watchMembership = (address: string, role = ""): Stream.Stream<MembershipEvent, GatewayCallError> =>
  Stream.unwrapScoped(
    Effect.gen(function* () {
      const client = yield* clusterClient(address)
      const metadata = yield* traceMetadata
      return Stream.async<MembershipEvent, GatewayCallError>(
        (emit) => {
          const call = client.watchMembership({ role }, metadata)
          call.on("data", (event: MembershipEvent) => {
            // Backpressure: stop reading from the socket until the buffer takes the event.
            call.pause()
            void emit.single(event).then(() => call.resume())
          })
          call.on("error", (error: ServiceError) =>
            error.code === status.CANCELLED ? emit.end() : emit.fail(callError("WatchMembership", error))
          )
          call.on("end", () => emit.end())
          return Effect.sync(() => call.cancel())
        },
        { bufferSize: WATCH_BUFFER }
      )
    })
  )
