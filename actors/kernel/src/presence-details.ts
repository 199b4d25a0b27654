/**
 * What an actor's heartbeat tells beyond the kernel's own counters: where it is reached (`endpoints`: its
 * gRPC port, its process's `/metrics` URL) and the role's own health (`roleStatus`: a replica's applied
 * instance, rounds per second, self-quits). `reef status` and the data-plane commands read both from presence,
 * so a user never has to know a port.
 *
 * A role announces its details after it starts (the replica spawns its actor deep inside `runReplica`, before
 * its gRPC port is known to the caller), so details are kept per process and looked up at every heartbeat.
 * Process-wide endpoints (`/metrics`) go in every actor's heartbeat; an actor's own ones only in its own.
 * Optional: without this service in context, heartbeats carry no details.
 */
import type { ActorAddress } from "@reef/proto"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** A role's health at one moment, name to display value (`{ applied: "1042", "self-quits": "0" }`). */
export type RoleStatus = Readonly<Record<string, string>>

/** One actor in this process: role and id (a process never runs two actors of one address). */
export type LocalActor = Pick<ActorAddress, "role" | "id">

export interface PresenceDetailsShape {
  /** Announces endpoints of one actor, or of every actor of this process when `actor` is omitted. */
  readonly announce: (endpoints: Readonly<Record<string, string>>, actor?: LocalActor) => Effect.Effect<void>
  /**
   * Reports the role status of one actor: `read` runs before each heartbeat (its failure or a slow answer
   * keeps the last status). Replaces an earlier reader of the same actor.
   */
  readonly reportStatus: (actor: LocalActor, read: Effect.Effect<RoleStatus>) => Effect.Effect<void>
  /** What the heartbeat of `actor` carries now. */
  readonly detailsOf: (actor: LocalActor) => Effect.Effect<{
    readonly endpoints: Record<string, string>
    readonly roleStatus: Record<string, string>
  }>
}

export class PresenceDetails extends Context.Tag("@reef/kernel/PresenceDetails")<
  PresenceDetails,
  PresenceDetailsShape
>() {}

/** How long a heartbeat waits for a role's status before it goes out with the last one. */
export const STATUS_READ_TIMEOUT_MS = 100

const keyOf = (actor: LocalActor) => `${actor.role}/${actor.id}`

export const makePresenceDetails = (): PresenceDetailsShape => {
  const processEndpoints: Record<string, string> = {}
  const actorEndpoints = new Map<string, Record<string, string>>()
  const readers = new Map<string, Effect.Effect<RoleStatus>>()
  const lastStatus = new Map<string, Record<string, string>>()
  return {
    announce: (endpoints, actor) =>
      Effect.sync(() => {
        if (actor === undefined) Object.assign(processEndpoints, endpoints)
        else actorEndpoints.set(keyOf(actor), { ...actorEndpoints.get(keyOf(actor)), ...endpoints })
      }),
    reportStatus: (actor, read) => Effect.sync(() => void readers.set(keyOf(actor), read)),
    detailsOf: (actor) =>
      Effect.gen(function* () {
        const key = keyOf(actor)
        const read = readers.get(key)
        if (read !== undefined) {
          // A reader that fails, dies or is slow must not stop the heartbeat: the last status stays.
          const status = yield* read.pipe(Effect.timeout(STATUS_READ_TIMEOUT_MS), Effect.exit)
          if (status._tag === "Success") lastStatus.set(key, { ...status.value })
        }
        return {
          endpoints: { ...processEndpoints, ...actorEndpoints.get(key) },
          roleStatus: lastStatus.get(key) ?? {}
        }
      })
  }
}

export const presenceDetailsLayer: Layer.Layer<PresenceDetails> = Layer.sync(PresenceDetails, makePresenceDetails)
