/** `reef watch`'s stream of membership changes (apart from gateway.ts: Stream is not needed by other commands). */
import { GatewayCallError } from "@reef/gateway/client"
import { watchMembership } from "@reef/gateway/watch"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { ClientContext } from "./command.js"
import { explainGatewayError, gatewayKnown } from "./gateway.js"

/** Emits every membership event (the current members first) until interrupted. */
export const printMembershipChanges = (context: ClientContext, role = "") =>
  Stream.unwrap(Effect.as(gatewayKnown(context), watchMembership(context.gateway, role))).pipe(
    Stream.mapError((error) => (error instanceof GatewayCallError ? explainGatewayError(context)(error) : error)),
    Stream.runForEach(context.emit)
  )
