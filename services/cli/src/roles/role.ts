/**
 * What a role declares to the CLI, in one place (one file per role under roles/, listed in roles/index.ts):
 *
 *   - `reef run <role>`: its options (each described, with its default), cross-field checks, and `start`;
 *   - `reef run <role> --help`: its summary, description and examples;
 *   - `reef up`: an optional contribution (`up`), the actors it adds to a local cluster and the `reef up`
 *     options that size them; roles that are not started by default join with `reef up --with <role>`;
 *   - `reef status`: optional columns built from the role status its heartbeats carry (`status`).
 *
 * Role files must stay cheap to import (every `reef` command reads this registry): load the role's packages
 * inside `start` (`Effect.promise(() => import("@reef/replica"))`), never at the top of the file.
 */
import type { Kernel } from "@reef/kernel"
import type { Member } from "@reef/proto"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { CliFailure } from "../cli/errors.js"
import type { Input, Options } from "../cli/spec.js"

/** What every `reef run <role>` gets besides its own options (parsed from the common options). */
export interface RoleContext {
  readonly id: string
  readonly cluster: string
  readonly natsUrl: string
}

/** What `start` reports once the role serves: the rest of its `reef ready:` line, and where it listens. */
export interface Started {
  /** e.g. `replica r1 kv 127.0.0.1:7001 group kv members r1,r2,r3` */
  readonly description: string
  /**
   * Endpoints of the role's actor (`<role>/<id>`), by name (`grpc`, `kv`): announced in its heartbeats, so
   * `reef status` shows them and data-plane commands find them.
   */
  readonly endpoints?: Readonly<Record<string, string>>
}

/** One actor `reef up` starts for a role. */
export interface PlannedActor {
  readonly role: string
  readonly id: string
  /** `reef run <role>` arguments besides `--id`, `--nats`, `--cluster`, `--metrics-port` and `ports`. */
  readonly args: ReadonlyArray<string>
  /**
   * Ports the actor needs, by its option name (`kv-port`) with the preferred (stable) port: `reef up` passes
   * it when free and falls back to a free port otherwise, saying so.
   */
  readonly ports?: Readonly<Record<string, number>>
}

export interface RoleUp<U extends Options = Options> {
  /** Started by a plain `reef up`; otherwise only with `reef up --with <role>`. */
  readonly byDefault: boolean
  /** `reef up` options this role adds (`--replicas`, `--kv-port`): flag names must not clash across roles. */
  readonly options: U
  /** Checks across this role's `reef up` values (a sentence when wrong). */
  readonly validate?: (input: Input<U, {}>) => string | undefined
  /** The actors to start, in start order (an empty list: none this time, e.g. `--replicas 0`). */
  readonly plan: (input: Input<U, {}>) => ReadonlyArray<PlannedActor>
}

/** Extra `reef status` columns for a role, from the role status in its members' heartbeats. */
export interface RoleStatusColumns {
  readonly headers: ReadonlyArray<string>
  /**
   * One cell per header for each member of this role. Gets every member of the role (joined, suspected and
   * left), so a column may compare a member with its peers (a replica's lag behind its group).
   */
  readonly cells: (
    members: ReadonlyArray<Member>,
    nowMs: number,
    /** Every member of the cluster, of every role (a worker's pool state is its coordinator's to say). */
    everyone: ReadonlyArray<Member>
  ) => ReadonlyMap<Member, ReadonlyArray<string>>
}

/** Columns that show role-status keys as they are, one column per key (named like it). */
export const roleStatusColumns = (keys: ReadonlyArray<string>): RoleStatusColumns => ({
  headers: keys,
  cells: (members) =>
    new Map(
      members.map((m) => {
        const status = m.lastHeartbeat?.roleStatus ?? {}
        return [m, keys.map((k) => status[k] ?? "-")]
      })
    )
})

export interface RoleSpec<O extends Options = Options, U extends Options = Options> {
  readonly role: string
  /** One line: `reef run --help` lists every role with it. */
  readonly summary: string
  /** Paragraphs for `reef run <role> --help`. */
  readonly description?: string
  readonly options: O
  readonly examples?: ReadonlyArray<string>
  /** Checks across values, with the id (`--members` must include the replica's own id). */
  readonly validate?: (input: Input<O, {}>, id: string) => string | undefined
  /** Starts the role in the current scope (actors spawned, servers listening) and says what runs. */
  readonly start: (
    input: Input<O, {}>,
    context: RoleContext
  ) => Effect.Effect<Started, CliFailure, Kernel | Scope.Scope>
  readonly up?: RoleUp<U>
  readonly status?: RoleStatusColumns
}

/** Identity that fixes a role's option types (use it for every role). */
export const defineRole = <const O extends Options, const U extends Options = {}>(
  spec: RoleSpec<O, U>
): RoleSpec<O, U> => spec
