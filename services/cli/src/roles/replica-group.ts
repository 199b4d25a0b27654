/**
 * What `reef run replica` without `--members` joins. POPUC groups are named (`--group`, subjects
 * `reef.<cluster>.popuc.<group>.*`) and a replica that started alone under a running group's name formed a
 * second group of one next to it: `reef kv get` then asked whichever joined first, and keys the group held
 * were "not found". So before the engine starts, a replica with no `--members` looks for a running group of
 * that name through presence and asks one of its replicas for the group's members (reef.v1.KV/State):
 *
 *   - no such group: it starts the group alone, as before;
 *   - a group of which it is a member (a member restarted with default flags): it adopts the members;
 *   - a group without it: refused, in one line naming the members. Adding one replica would make N even,
 *     and POPUC needs N = 2t + 1, so it cannot join by itself: the group changes its membership through
 *     consensus (reef.v1.KV/Reconfigure, as tests/src/popuc-reconfigure.test.ts does).
 *
 * Loaded by the replica role's `start` only.
 */
import { isJoined, KernelConfig, Membership } from "@reef/kernel"
import type { Member } from "@reef/proto/presence"
import { makeKvClient } from "@reef/replica"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { ClusterStateError } from "../cli/errors.js"
import { naturalOrder } from "../natural-order.js"

/** Heartbeats to wait for before deciding no group of that name runs (each member beats once per interval). */
const HEARTBEATS_TO_HEAR = 3

const inGroup = (group: string, self: string) => (m: Member) =>
  isJoined(m) &&
  m.address?.role === "replica" &&
  m.address.id !== self &&
  m.lastHeartbeat?.roleStatus.group === group &&
  m.lastHeartbeat.endpoints.kv !== undefined

/** The members this replica starts with when `--members` was not given (see the module comment). */
export const membersToStartWith = (group: string, self: string, cluster: string) =>
  Effect.gen(function* () {
    const membership = yield* Membership
    const config = yield* KernelConfig
    const heard = yield* membership
      .awaitMembers((members) => members.some(inGroup(group, self)))
      .pipe(Effect.timeoutOption(HEARTBEATS_TO_HEAR * config.heartbeatIntervalMs))
    if (Option.isNone(heard)) return [self]
    const peers = heard.value.filter(inGroup(group, self)).sort((a, b) => naturalOrder(a.address!.id, b.address!.id))
    // Any joined member knows the group's current members; ask each in turn until one answers.
    const members = yield* Effect.firstSuccessOf(
      peers.map((peer) =>
        Effect.scoped(
          Effect.flatMap(
            makeKvClient({ replicas: [peer.lastHeartbeat!.endpoints.kv!], transport: "unary", timeoutMs: 5_000 }),
            (client) => client.state(0)
          )
        ).pipe(Effect.map((state) => state.members))
      )
    ).pipe(
      Effect.mapError(
        (error) =>
          new ClusterStateError({
            message: `group ${group} runs in cluster ${cluster} (replicas ${peers.map((p) => p.address!.id).join(", ")}) but none told its members (${error.message}); pass --members`
          })
      )
    )
    if (members.includes(self)) return members
    return yield* new ClusterStateError({
      message:
        `group ${group} is already running in cluster ${cluster} with members ${members.join(",")}, and ${self} is not one ` +
        `of them: start ${self} with another --group, or as one of them; a running group changes members through consensus (reef.v1.KV/Reconfigure)`
    })
  })
