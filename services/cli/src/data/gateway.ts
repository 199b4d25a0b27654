/**
 * The gateway calls data-plane commands make, with failures worded for a person: an unreachable gateway says
 * where the address came from and what to do.
 */
import { status } from "@grpc/grpc-js"
import { type GatewayCallError, listActors, ping } from "@reef/gateway/client"
import type { ActorAddress } from "@reef/proto"
import { type Member, MemberState } from "@reef/proto/presence"
import * as Effect from "effect/Effect"
import { ClusterStateError, NotFoundError } from "../cli/errors.js"
import { naturalOrder } from "../natural-order.js"
import { UnreachableError } from "./client.js"
import type { ClientContext } from "./command.js"

/**
 * Whether a call failed before reaching the server (no connection): grpc-js words those itself. An UNAVAILABLE
 * that the gateway sent (an actor that did not answer) is the actor's failure, not the gateway's.
 */
export const failedToConnect = (error: { readonly code: number; readonly details: string }): boolean =>
  error.code === status.DEADLINE_EXCEEDED ||
  (error.code === status.UNAVAILABLE &&
    /No connection established|ECONNREFUSED|ECONNRESET|Connection dropped|failed to connect|Name resolution failed/i.test(
      error.details
    ))

/** A gateway call's failure in one line (with a hint when it did not answer at all). */
export const explainGatewayError = (context: ClientContext) => (error: GatewayCallError) => {
  if (error.code === status.NOT_FOUND) return new NotFoundError({ message: error.details })
  if (!failedToConnect(error)) return error
  const from =
    context.gatewaySource === "cluster file"
      ? `the address in the cluster file; is its reef up (pid ${context.clusterFile?.pid}) still running?`
      : context.gatewaySource === "flag"
        ? "check --gateway"
        : `${context.noCluster ?? "no running cluster found here"}: start one with 'reef up', or pass --gateway`
  const reason = /ECONNREFUSED/.test(error.details)
    ? "connection refused"
    : error.code === status.DEADLINE_EXCEEDED
      ? `no answer in ${context.timeoutMs} ms`
      : error.details.split("\n")[0]!.replace(/^No connection established\. Last error: /, "")
  return new UnreachableError({ message: `cannot reach the gateway at ${context.gateway} (${reason}): ${from}` })
}

/** Fails with the cluster file's problem when one was named but runs nothing (ClientContext.clusterProblem). */
export const gatewayKnown = (context: ClientContext) =>
  context.clusterProblem === undefined
    ? Effect.void
    : Effect.fail(new ClusterStateError({ message: context.clusterProblem }))

/** Every member the gateway knows, recently left ones included. */
export const members = (context: ClientContext, role = "") =>
  Effect.zipRight(
    gatewayKnown(context),
    listActors(context.gateway, role, { timeoutMs: context.timeoutMs, includeLeft: true }).pipe(
      Effect.mapError(explainGatewayError(context))
    )
  )

export const pingActor = (
  context: ClientContext,
  target: ActorAddress,
  relay: ReadonlyArray<ActorAddress>,
  payload: string
) =>
  Effect.zipRight(
    gatewayKnown(context),
    ping(context.gateway, { target, relay, payload }, { timeoutMs: context.timeoutMs }).pipe(
      Effect.mapError(explainGatewayError(context))
    )
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
