/**
 * The Membership service: this process's view of which actors are joined, suspected or left, built from the
 * heartbeats every actor publishes (actor-runtime.ts). The state machine is membership-view.ts; this shell
 * subscribes, ticks, and publishes changes to any number of watchers.
 *
 * Detection bound: a crashed actor process stops beating; it is suspected within
 * `membership.suspectAfterMs + heartbeatIntervalMs / 2` (the tick period) of its last heartbeat.
 */
import { Heartbeat, type Member, MemberState, type MembershipEvent } from "@reef/proto"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import * as Runtime from "effect/Runtime"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { Bus } from "./bus.js"
import { decodeAs } from "./codec.js"
import { KernelConfig } from "./config.js"
import { emptyView, type MembershipInput, stepMembership } from "./membership-view.js"
import { presenceWildcard } from "./subjects.js"

export interface MembershipShape {
  /** Current members (left ones included until forgotten). */
  readonly members: Effect.Effect<ReadonlyArray<Member>>
  /** Changes from now on. */
  readonly changes: Stream.Stream<MembershipEvent>
  /** Every current member as an event, then every change: what WatchMembership streams. */
  readonly watch: Stream.Stream<MembershipEvent>
  /** Completes once `predicate` holds for the member list (useful to wait for a cluster to form). */
  readonly awaitMembers: (
    predicate: (members: ReadonlyArray<Member>) => boolean
  ) => Effect.Effect<ReadonlyArray<Member>>
}

export class Membership extends Context.Tag("@reef/kernel/Membership")<Membership, MembershipShape>() {}

export const isJoined = (member: Member): boolean => member.state === MemberState.MEMBER_STATE_JOINED

export const membershipLayer: Layer.Layer<Membership, never, Bus | KernelConfig> = Layer.scoped(
  Membership,
  Effect.gen(function* () {
    const bus = yield* Bus
    const config = yield* KernelConfig
    const clock = yield* Effect.clock
    const runSync = Runtime.runSync(yield* Effect.runtime<never>())
    const hub = yield* PubSub.unbounded<MembershipEvent>()
    // Plain state stepped by plain functions: heartbeats arrive in NATS callbacks and ticks in their own fiber,
    // but JS runs one at a time and a step never yields, so the view and its events stay in step order.
    let view = emptyView

    const apply = (input: MembershipInput) => {
      const step = stepMembership(view, config.membership, input)
      view = step.view
      // An unbounded hub never suspends a publisher.
      if (step.events.length > 0) runSync(PubSub.publishAll(hub, step.events))
    }

    yield* bus
      .listen(
        presenceWildcard(config.cluster),
        (message) =>
          Either.match(decodeAs(Heartbeat, message.data, message.subject), {
            onLeft: (error) => runSync(Effect.logWarning("ignoring malformed heartbeat", error.message)),
            onRight: (heartbeat) => apply({ _tag: "Heartbeat", heartbeat, nowMs: clock.unsafeCurrentTimeMillis() })
          }),
        (error) => runSync(Effect.logError("membership: heartbeats not taken", error))
      )
      .pipe(Effect.orDie)
    yield* Effect.sync(() => apply({ _tag: "Tick", nowMs: clock.unsafeCurrentTimeMillis() })).pipe(
      Effect.repeat(Schedule.spaced(Duration.millis(Math.max(10, config.heartbeatIntervalMs / 2)))),
      Effect.forkScoped
    )

    const members = Effect.sync(() => [...view.values()])
    const changes = Stream.fromPubSub(hub)
    const watch = Stream.unwrapScoped(
      Effect.gen(function* () {
        // Subscribe before reading the snapshot so no change falls between the two.
        const queue = yield* PubSub.subscribe(hub)
        const snapshot = yield* members
        return Stream.concat(
          Stream.fromIterable(snapshot.map((member) => ({ member, previous: MemberState.MEMBER_STATE_UNSPECIFIED }))),
          Stream.fromQueue(queue)
        )
      })
    )
    const awaitMembers = (predicate: (members: ReadonlyArray<Member>) => boolean) =>
      Stream.concat(Stream.make(undefined), watch).pipe(
        Stream.mapEffect(() => members),
        Stream.filter(predicate),
        Stream.runHead,
        Effect.map((found) => (found._tag === "Some" ? found.value : []))
      )
    return Membership.of({ members, changes, watch, awaitMembers })
  })
)
