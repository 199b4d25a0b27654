/**
 * The NIC as a Reef actor (`nic/<replica id>`): makes the engine visible in presence and NATS service
 * discovery like every actor. Its data plane (round messages) runs in the engine thread on its own subjects;
 * this actor answers pings and its heartbeats carry the process's liveness.
 */
import { defineActor } from "@reef/kernel"
import * as Effect from "effect/Effect"

export const nicActor = defineActor({
  role: "nic",
  description: "POPUC consensus engine (worker thread) of one replica",
  initialState: Effect.succeed(undefined),
  handlers: []
})
