/**
 * `reef run <role>`: one actor process. It connects to NATS (reconnecting forever), starts the role,
 * and runs until SIGTERM/SIGINT, when the scope closes: subscriptions drain, mailboxes empty, a leaving
 * heartbeat goes out, and the last spans are exported.
 */
import { READY_PREFIX } from "@reef/devkit"
import { natsKernelLayer } from "@reef/kernel"
import { ObservabilityLive } from "@reef/observability/live"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { findRole, type RunOptions, roles } from "./roles.js"

export class UnknownRoleError extends Data.TaggedError("UnknownRoleError")<{ readonly role: string }> {
  override get message() {
    return `unknown role "${this.role}"; known roles: ${roles.map((r) => r.role).join(", ")}`
  }
}

export const runRole = (role: string, options: RunOptions) =>
  Effect.gen(function* () {
    const launcher = findRole(role)
    if (launcher === undefined) return yield* new UnknownRoleError({ role })
    const description = yield* launcher.start(options)
    // One parseable line: `reef up` and the tests wait for it.
    yield* Effect.sync(() => console.log(`${READY_PREFIX} ${description} (pid ${process.pid})`))
    return yield* Effect.never
  }).pipe(
    Effect.scoped,
    Effect.provide(
      Layer.merge(
        natsKernelLayer({ servers: options.natsUrl, name: `reef-${role}-${options.id}` }, { cluster: options.cluster }),
        ObservabilityLive({ role, id: options.id })
      )
    ),
    Effect.annotateLogs({ role, id: options.id })
  )
