/**
 * `reef.v1.Cluster`, the cluster's client API: the gateway's membership view (ListActors, WatchMembership)
 * and Ping through the actor kernel. Requests are validated here, at the edge, so a bad one is refused with
 * INVALID_ARGUMENT and a message instead of reaching the bus. Statuses come from @reef/grpc's one mapping.
 */
import { type CallInfo, type GrpcService, grpcService, InvalidRequestError } from "@reef/grpc"
import {
  addressProblem,
  errorCodeOf,
  formatAddress,
  HandlerError,
  isJoined,
  isValidToken,
  KernelConfig,
  Membership,
  Messenger,
  PingRpc
} from "@reef/kernel"
import { ATTR_REEF_PING_RELAY_HOPS, ATTR_REEF_PING_TARGET } from "@reef/observability/tracing"
import {
  type ActorAddress,
  ClusterService,
  ErrorCode,
  type Member,
  MemberState,
  type MembershipEvent,
  type PingRequest
} from "@reef/proto"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

/** Largest Ping payload the gateway forwards (UTF-8 bytes). */
export const MAX_PING_PAYLOAD_BYTES = 64 * 1024
/** Longest relay chain a Ping may ask for: each hop is one more ask in flight. */
export const MAX_PING_RELAY_HOPS = 16

export interface ClusterServiceOptions {
  /** Upper bound for one Ping (the whole relay chain); a shorter client deadline wins. Defaults to the kernel's askTimeoutMs. */
  readonly pingTimeoutMs?: number
}

/** The role filter of a request: empty means every role; otherwise one subject token. */
export const validateRole = (role: string): Effect.Effect<string, InvalidRequestError> =>
  role === "" || isValidToken(role)
    ? Effect.succeed(role)
    : Effect.fail(
        new InvalidRequestError({
          field: "role",
          reason: `"${role}" is not a role name: use letters, digits, "_", "-" or "$" (no ".", "*", ">" or spaces), at most 64 characters`
        })
      )

const matchesRole = (role: string) => (member: Member | undefined) => role === "" || member?.address?.role === role

const byAddress = (a: Member, b: Member) =>
  formatAddress(a.address ?? { cluster: "", role: "", id: "" }).localeCompare(
    formatAddress(b.address ?? { cluster: "", role: "", id: "" })
  )

/** Members to list: one role or all, without LEFT ones unless asked, sorted by role/id. */
export const selectMembers = (
  members: ReadonlyArray<Member>,
  filter: { readonly role: string; readonly includeLeft: boolean }
): Array<Member> =>
  members
    .filter(matchesRole(filter.role))
    .filter((m) => filter.includeLeft || m.state !== MemberState.MEMBER_STATE_LEFT)
    .sort(byAddress)

/**
 * Watch events to send: one role or all. An actor that had already left before the watch started is not
 * "current" (ListActors hides it too), so snapshot events (previous UNSPECIFIED) of LEFT members are dropped.
 */
export const watchedEvent =
  (role: string) =>
  (event: MembershipEvent): boolean =>
    matchesRole(role)(event.member) &&
    !(event.previous === MemberState.MEMBER_STATE_UNSPECIFIED && event.member?.state === MemberState.MEMBER_STATE_LEFT)

/** An address from a client, completed with the gateway's cluster when it left that empty, then checked. */
const validateAddress = (field: string, address: ActorAddress, cluster: string) => {
  const complete = { ...address, cluster: address.cluster === "" ? cluster : address.cluster }
  const problem = addressProblem(complete)
  return problem === undefined
    ? Effect.succeed(complete)
    : Effect.fail(new InvalidRequestError({ field, reason: problem }))
}

/** A Ping the gateway will forward. */
export interface ValidPing extends PingRequest {
  readonly target: ActorAddress
}

/** Checks a Ping request: target present and valid, relays valid, payload and chain bounded. */
export const validatePing = (request: PingRequest, cluster: string): Effect.Effect<ValidPing, InvalidRequestError> =>
  Effect.gen(function* () {
    if (request.target === undefined) {
      return yield* new InvalidRequestError({ field: "target", reason: "required: the actor to ping" })
    }
    if (request.relay.length > MAX_PING_RELAY_HOPS) {
      return yield* new InvalidRequestError({
        field: "relay",
        reason: `${request.relay.length} hops; at most ${MAX_PING_RELAY_HOPS}`
      })
    }
    const payloadBytes = Buffer.byteLength(request.payload, "utf8")
    if (payloadBytes > MAX_PING_PAYLOAD_BYTES) {
      return yield* new InvalidRequestError({
        field: "payload",
        reason: `${payloadBytes} bytes; at most ${MAX_PING_PAYLOAD_BYTES}`
      })
    }
    const target = yield* validateAddress("target", request.target, cluster)
    const relay = yield* Effect.forEach(request.relay, (address, i) => validateAddress(`relay[${i}]`, address, cluster))
    return { target, relay, payload: request.payload }
  })

/**
 * Why a Ping cannot be delivered, when an actor it names is not a joined member: `no actor counter/c9 (there
 * are counter/c1, c2)`. Without this a Ping to a typo came back as "no responders", which reads like the
 * gateway itself being unreachable.
 */
export const missingActor = (ping: ValidPing, members: ReadonlyArray<Member>): string | undefined => {
  const joined = members.filter(isJoined)
  for (const address of [ping.target, ...ping.relay]) {
    const present = joined.some(
      (m) => m.address?.role === address.role && m.address.id === address.id && m.address.cluster === address.cluster
    )
    if (present) continue
    const sameRole = joined
      .filter((m) => m.address?.role === address.role)
      .map((m) => m.address?.id ?? "")
      .sort((a, b) => a.localeCompare(b, "en", { numeric: true }))
    const name = `${address.role}/${address.id}`
    const known =
      sameRole.length > 0
        ? `there are ${address.role}/${sameRole.join(", ")}`
        : `no ${address.role} at all; roles: ${[...new Set(joined.map((m) => m.address?.role ?? ""))].sort().join(", ") || "none"}`
    return `no actor ${name} in cluster ${address.cluster} (${known})`
  }
  return undefined
}

const UNANSWERED = new Set([ErrorCode.ERROR_CODE_UNAVAILABLE, ErrorCode.ERROR_CODE_TIMEOUT])

/** The ask timeout of one Ping: the configured bound, shortened to the client's deadline. */
const pingTimeoutMs = (boundMs: number, call: CallInfo, nowMs: number) =>
  Math.max(1, Math.min(boundMs, call.deadlineMs - nowMs))

/** The Cluster service on the Membership and Messenger in context. */
export const makeClusterService = (
  options: ClusterServiceOptions = {}
): Effect.Effect<GrpcService, never, Membership | Messenger | KernelConfig> =>
  Effect.gen(function* () {
    const membership = yield* Membership
    const messenger = yield* Messenger
    const config = yield* KernelConfig
    const pingBoundMs = options.pingTimeoutMs ?? config.askTimeoutMs
    /** A Ping that went unanswered: NOT_FOUND naming what is there when an actor it names is not a member. */
    const explainMissing = <E>(ping: ValidPing, error: E): Effect.Effect<never, E | HandlerError> =>
      Effect.flatMap(membership.members, (members): Effect.Effect<never, E | HandlerError> => {
        const missing = missingActor(ping, members)
        return missing === undefined
          ? Effect.fail(error)
          : Effect.fail(new HandlerError({ code: ErrorCode.ERROR_CODE_NOT_FOUND, message: missing }))
      })

    return grpcService(ClusterService, {
      listActors: (request) =>
        Effect.gen(function* () {
          const role = yield* validateRole(request.role)
          const members = yield* membership.members
          return { members: selectMembers(members, { role, includeLeft: request.includeLeft }) }
        }),
      watchMembership: (request) =>
        Stream.unwrap(
          Effect.map(validateRole(request.role), (role) => membership.watch.pipe(Stream.filter(watchedEvent(role))))
        ),
      ping: (request, call) =>
        Effect.gen(function* () {
          const ping = yield* validatePing(request, config.cluster)
          // The client's deadline is wall-clock time, so it is compared with wall-clock time (not Effect's Clock).
          const timeoutMs = pingTimeoutMs(pingBoundMs, call, yield* Effect.sync(() => Date.now()))
          yield* Effect.annotateCurrentSpan({
            [ATTR_REEF_PING_TARGET]: formatAddress(ping.target),
            [ATTR_REEF_PING_RELAY_HOPS]: ping.relay.length
          })
          // Only a failed ask looks at the view (a member that has just started may not be in it yet).
          return yield* messenger.ask(ping.target, PingRpc, ping, { timeoutMs }).pipe(
            // Unanswered here or at a relay hop (which comes back as the hop's RemoteError).
            Effect.catchIf(
              (error) => UNANSWERED.has(errorCodeOf(error)),
              (error) => explainMissing(ping, error)
            )
          )
        })
    })
  })
