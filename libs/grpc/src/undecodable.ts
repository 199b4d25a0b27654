/**
 * Requests that do not decode are the client's error: INVALID_ARGUMENT with what the decoder said, never
 * grpc-js's default INTERNAL ("Error deserializing request", which reads as a server bug). grpc-js decodes a
 * request before any handler or interceptor sees it and hard-codes INTERNAL on a throw, so every method's
 * decoder is wrapped to hand on a marker instead (`server.register`), and a server interceptor answers the
 * marker. It covers every method of the server the same way: Effect services, raw ones, health and reflection.
 */
import {
  Metadata,
  type Server,
  ServerInterceptingCall,
  type ServerInterceptingCallInterface,
  type ServerInterceptor,
  ServerListenerBuilder,
  status
} from "@grpc/grpc-js"
import { ErrorCode } from "@reef/proto"
import { REEF_ERROR_CODE_TRAILER } from "./trailer.js"

/** What a request that failed to decode is replaced by on its way to the interceptor. */
export class UndecodableRequest {
  constructor(readonly reason: string) {}
}

const reasonOf = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** A decoder that returns the marker instead of throwing. */
export const markUndecodable =
  <A>(deserialize: (bytes: Buffer) => A) =>
  (bytes: Buffer): A | UndecodableRequest => {
    try {
      return deserialize(bytes)
    } catch (e) {
      return new UndecodableRequest(reasonOf(e))
    }
  }

/** Answers a marked request INVALID_ARGUMENT (and the `reef-error-code` trailer), before any handler runs. */
export const refuseUndecodable: ServerInterceptor = (method, call: ServerInterceptingCallInterface) =>
  new ServerInterceptingCall(call, {
    start: (next) =>
      next(
        new ServerListenerBuilder()
          .withOnReceiveMessage((message, nextMessage) => {
            if (!(message instanceof UndecodableRequest)) return nextMessage(message)
            const metadata = new Metadata()
            metadata.set(REEF_ERROR_CODE_TRAILER, ErrorCode[ErrorCode.ERROR_CODE_INVALID_ARGUMENT])
            call.sendStatus({
              code: status.INVALID_ARGUMENT,
              details: `request to ${method.path} is not a valid ${method.path.split("/").pop()} message: ${message.reason}`,
              metadata
            })
          })
          .build()
      )
  })

/** Makes every method registered on `server` from now on hand undecodable requests to `refuseUndecodable`. */
export const markUndecodableRequests = (server: Server): void => {
  const register = server.register.bind(server)
  server.register = (name, handler, serialize, deserialize, type) =>
    register(name, handler, serialize, markUndecodable(deserialize) as typeof deserialize, type)
}
