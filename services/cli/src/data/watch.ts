/** `reef watch`: membership changes as they happen (the current members first), until Ctrl-C. */
import { MemberState, type MembershipEvent } from "@reef/proto"
import * as Effect from "effect/Effect"
import { Opt } from "../cli/spec.js"
import { stateName, statusName } from "../status-view.js"
import { dataCommand } from "./command.js"

const clock = (ms: number) => new Date(ms).toISOString().slice(11, 23)

export const watchCommand = dataCommand({
  name: "watch",
  command: "watch",
  summary: "print membership changes live: actors joining, suspected, leaving, restarting",
  description:
    "Prints every current member first, then each change as the gateway sees it, until Ctrl-C. With -o json, one " +
    "JSON object per line.",
  options: { role: Opt.token({ description: "only actors of this role", defaultText: "every role" }) },
  examples: ["reef watch", "reef watch --role replica -o json"],
  run: (input, context) =>
    Effect.gen(function* () {
      const { printMembershipChanges } = yield* Effect.promise(() => import("./watch-stream.js"))
      yield* printMembershipChanges(context, input.role ?? "")
    }),
  text: (event: MembershipEvent, style) => {
    const m = event.member
    const state = stateName(m?.state ?? MemberState.MEMBER_STATE_UNSPECIFIED)
    const was =
      event.previous === MemberState.MEMBER_STATE_UNSPECIFIED ? "" : style.dim(` (was ${stateName(event.previous)})`)
    const status = statusName(m?.lastHeartbeat?.status)
    return `${style.dim(clock(m?.lastSeenMs ?? Date.now()))} ${state.padEnd(9)} ${m?.address?.role}/${m?.address?.id} pid ${m?.lastHeartbeat?.pid ?? "?"} ${status}${was}`
  },
  json: (event: MembershipEvent) => ({
    role: event.member?.address?.role,
    id: event.member?.address?.id,
    state: stateName(event.member?.state ?? MemberState.MEMBER_STATE_UNSPECIFIED),
    previous: stateName(event.previous),
    status: statusName(event.member?.lastHeartbeat?.status),
    pid: event.member?.lastHeartbeat?.pid,
    incarnation: event.member?.lastHeartbeat?.incarnation,
    atMs: event.member?.lastSeenMs
  })
})
