/**
 * `reef status`: the actor table from the gateway's membership view (one call, no waiting for heartbeats),
 * recently left actors included and marked, plus each role's own columns (a replica's applied instance,
 * rounds/s, self-quits, lag). `--watch` redraws it; `-o json` for scripts.
 */
import type { Member } from "@reef/proto/presence"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { UsageError } from "../cli/errors.js"
import { Opt } from "../cli/spec.js"
import { dataCommand } from "../data/command.js"
import { roles } from "../roles/index.js"
import { statusJson, statusSummary, statusText } from "../status-view.js"

interface StatusResult {
  readonly members: ReadonlyArray<Member>
  readonly nowMs: number
  readonly gateway: string
  readonly watching: boolean
}

export const statusCommand = dataCommand({
  name: "status",
  command: "status",
  summary: "show every actor of the cluster: state, load, endpoints and each role's health",
  description:
    "Reads the gateway's membership view: joined actors, suspected ones (silent for 1.5 s) and those that left " +
    "in the last minute. Roles add their own columns: for a replica its group, applied consensus instance, " +
    "rounds per second, self-quits and lag (instances behind the group's most advanced replica).",
  options: {
    role: Opt.token({ description: "only actors of this role", defaultText: "every role" }),
    watch: Opt.flag({ description: "redraw every --interval until Ctrl-C", short: "w" }),
    interval: Opt.integer({
      description: "redraw period of --watch in ms",
      placeholder: "MS",
      default: 1_000,
      min: 100
    })
  },
  examples: ["reef status", "reef status --role replica --watch", "reef status -o json"],
  run: (input, context) =>
    Effect.gen(function* () {
      const { members } = yield* Effect.promise(() => import("../data/gateway.js"))
      const read = Effect.gen(function* () {
        const list = yield* members(context, input.role ?? "")
        if (input.role !== undefined && list.length === 0) {
          const present = [...new Set((yield* members(context)).map((m) => m.address?.role ?? ""))].sort()
          return yield* new UsageError({
            message: `no actor of role "${input.role}" in this cluster (roles present: ${present.join(", ") || "none"})`
          })
        }
        return { members: list, nowMs: Date.now(), gateway: context.gateway, watching: input.watch }
      })
      if (!input.watch) return yield* read
      const redraw = context.format === "text" && process.stdout.isTTY === true
      yield* read.pipe(
        Effect.flatMap((result) =>
          Effect.zipRight(
            Effect.sync(() => redraw && process.stdout.write("\x1b[H\x1b[2J")),
            context.emit(result)
          )
        ),
        Effect.repeat(Schedule.spaced(`${input.interval} millis`))
      )
    }),
  text: (result: StatusResult, style) =>
    `${style.dim(statusSummary(result.members, result.gateway))}\n${statusText({ ...result, roles }, style)}${result.watching ? "\n" : ""}`,
  json: (result: StatusResult) => ({
    gateway: result.gateway,
    nowMs: result.nowMs,
    ...statusJson({ ...result, roles })
  })
})
