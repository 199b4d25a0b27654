/**
 * The roles `reef run <role>` can start, and what each one starts. A role adds itself here when it exists.
 */
import { counterActor, type Kernel, spawn } from "@reef/kernel"
import type { Effect, Scope } from "effect"
import * as E from "effect/Effect"

export interface RunOptions {
  readonly id: string
  readonly cluster: string
  readonly natsUrl: string
  readonly grpcPort: number
}

export interface RoleLauncher {
  readonly role: string
  readonly description: string
  /** Starts the role in the current scope and returns a line describing what runs. */
  readonly start: (options: RunOptions) => Effect.Effect<string, unknown, Kernel | Scope.Scope>
}

const counter: RoleLauncher = {
  role: "counter",
  description: "demo counter actor (exercises tell, ask, batches, supervision)",
  start: (options) => E.map(spawn(counterActor, options.id), (ref) => `counter ${ref.address.id}`)
}

const gateway: RoleLauncher = {
  role: "gateway",
  description: "gRPC gateway: reef.v1.Cluster, health and reflection",
  // Loaded on demand: grpc-js is not needed (nor its memory spent) in processes of other roles.
  start: (options) =>
    E.promise(() => import("@reef/gateway")).pipe(
      E.flatMap(({ runGateway }) => runGateway({ port: options.grpcPort, id: options.id })),
      E.map((server) => `gateway ${options.id} on ${server.address}`)
    )
}

export const roles: ReadonlyArray<RoleLauncher> = [gateway, counter]

export const findRole = (role: string): RoleLauncher | undefined => roles.find((r) => r.role === role)
