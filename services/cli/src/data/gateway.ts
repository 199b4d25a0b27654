/**
 * The gateway calls data-plane commands make, with failures worded for a person: an unreachable gateway says
 * where the address came from and what to do.
 */
import { status } from "@grpc/grpc-js"
import { type GatewayCallError, listActors, ping } from "@reef/gateway/client"
import type { ActorAddress } from "@reef/proto"
import { type Member, MemberState } from "@reef/proto/presence"
import * as Effect from "effect/Effect"
import { naturalOrder } from "../natural-order.js"
import { UnreachableError } from "./client.js"
import type { ClientContext } from "./command.js"

const unreachableCodes = new Set<number>([status.UNAVAILABLE, status.DEADLINE_EXCEEDED])

/** A gateway call's failure in one line (with a hint when it did not answer at all). */
export const explainGatewayError = (context: ClientContext) => (error: GatewayCallError) => {
  if (!unreachableCodes.has(error.code)) return error
  const from =
    context.gatewaySource === "cluster file"
      ? `the address in the cluster file; is its reef up (pid ${context.clusterFile?.pid}) still running?`
      : context.gatewaySource === "flag"
        ? "check --gateway"
        : "no running cluster found here (.reef/cluster.json): start one with 'reef up', or pass --gateway"
  const reason = /ECONNREFUSED/.test(error.details)
    ? "connection refused"
    : error.code === status.DEADLINE_EXCEEDED
      ? `no answer in ${context.timeoutMs} ms`
      : error.details.split("\n")[0]!.replace(/^No connection established\. Last error: /, "")
  return new UnreachableError({ message: `cannot reach the gateway at ${context.gateway} (${reason}): ${from}` })
}

/** Every member the gateway knows, recently left ones included. */
export const members = (context: ClientContext, role = "") =>
  listActors(context.gateway, role, { timeoutMs: context.timeoutMs, includeLeft: true }).pipe(
    Effect.mapError(explainGatewayError(context))
  )

export const pingActor = (
  context: ClientContext,
  target: ActorAddress,
  relay: ReadonlyArray<ActorAddress>,
  payload: string
) =>
  ping(context.gateway, { target, relay, payload }, { timeoutMs: context.timeoutMs }).pipe(
    Effect.mapError(explainGatewayError(context))
  )

/** The `endpoint` of every joined member of `role` (e.g. each replica's `kv`), sorted by id. */
export const endpointsOf = (list: ReadonlyArray<Member>, role: string, endpoint: string) =>
  list
    .filter((m) => m.state === MemberState.MEMBER_STATE_JOINED && m.address?.role === role)
    .flatMap((m) => {
      const address = m.lastHeartbeat?.endpoints[endpoint]
      return address === undefined ? [] : [{ id: m.address?.id ?? "", address, member: m }]
    })
    .sort((a, b) => naturalOrder(a.id, b.id))
