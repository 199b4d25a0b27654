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
  /** Role-specific flags (`--group`, `--members`, `--kv-port`, ...), as given. */
  readonly flags: Readonly<Record<string, string | undefined>>
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

/**
 * `reef run replica --id r1 --group kv --members r1,r2,r3 [--kv-port N] [--engines K] [--interaction-ms X]
 * [--instance-gap-ms G] [--log-bytes B] [--round-close allHeard|timer]`
 */
const replica: RoleLauncher = {
  role: "replica",
  description: "POPUC replica (host server + NIC engine thread) serving reef.v1.KV",
  start: (options) =>
    E.gen(function* () {
      const [{ runReplica }, { nicActor, roundPeriodMs, ROUND_CLOSE_MODES }] = yield* E.promise(() =>
        Promise.all([import("@reef/replica"), import("@reef/nic")])
      )
      const members = (options.flags.members ?? options.id).split(",").filter((m) => m !== "")
      const number = (flag: string) => {
        const raw = options.flags[flag]
        if (raw === undefined) return undefined
        const n = Number(raw)
        if (!Number.isFinite(n) || n < 0) throw new Error(`--${flag} must be a number >= 0, got "${raw}"`)
        return n
      }
      const roundClose = ROUND_CLOSE_MODES.find((m) => m === options.flags["round-close"])
      if (options.flags["round-close"] !== undefined && roundClose === undefined) {
        throw new Error(
          `--round-close must be one of ${ROUND_CLOSE_MODES.join(", ")}, got "${options.flags["round-close"]}"`
        )
      }
      const handle = yield* runReplica({
        id: options.id,
        group: options.flags.group ?? "kv",
        members,
        natsUrl: options.natsUrl,
        grpcPort: number("kv-port") ?? 0,
        ...(number("engines") === undefined ? {} : { engines: number("engines")! }),
        ...(number("interaction-ms") === undefined ? {} : { interactionMs: number("interaction-ms")! }),
        ...(number("instance-gap-ms") === undefined ? {} : { instanceGapMs: number("instance-gap-ms")! }),
        ...(number("log-bytes") === undefined ? {} : { log: { maxBytes: number("log-bytes")! } }),
        ...(roundClose === undefined ? {} : { roundClose })
      })
      yield* spawn(nicActor, options.id)
      const timer = handle.engine.roundTimer
      return `replica ${options.id} kv ${handle.grpcAddress} group ${options.flags.group ?? "kv"} members ${members.join(",")} engines ${handle.engine.engines} round ${roundPeriodMs(timer).toFixed(2)}ms`
    })
}

export const roles: ReadonlyArray<RoleLauncher> = [gateway, counter, replica]

export const findRole = (role: string): RoleLauncher | undefined => roles.find((r) => r.role === role)
