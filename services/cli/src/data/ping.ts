/** `reef ping <role/id>`: asks one actor to answer through the gateway (optionally relayed through others). */
import type { ActorAddress, PingReply } from "@reef/proto"
import * as Effect from "effect/Effect"
import { Arg, bad, Opt, ok, type Parsed } from "../cli/spec.js"
import { dataCommand } from "./command.js"

const TOKEN = /^[A-Za-z0-9_$-]{1,64}$/

/** `role/id` as an address of the gateway's cluster. */
export const parseActor = (raw: string): Parsed<ActorAddress> => {
  const [role, id, ...rest] = raw.split("/")
  if (role === undefined || id === undefined || rest.length > 0 || !TOKEN.test(role) || !TOKEN.test(id)) {
    return bad("expected role/id, e.g. counter/c1")
  }
  return ok({ cluster: "", role, id })
}

interface PingResult {
  readonly reply: PingReply
  readonly ms: number
}

export const pingCommand = dataCommand({
  name: "ping",
  command: "ping",
  summary: "ask an actor to answer, through the gateway (and a relay of actors): one trace across all of them",
  options: {
    relay: Opt.of<ReadonlyArray<ActorAddress>>({
      description: "actors the ping passes through after the target, in order",
      placeholder: "ROLE/ID,...",
      default: [],
      parse: (raw) => {
        const parsed = raw.split(",").map(parseActor)
        const wrong = parsed.find((p) => !p.ok)
        return wrong !== undefined && !wrong.ok
          ? bad(wrong.error)
          : ok(parsed.map((p) => (p as { value: ActorAddress }).value))
      }
    }),
    payload: Opt.text({ description: "text echoed back", default: "ping" })
  },
  args: { target: Arg.of({ description: "the actor, as role/id (e.g. counter/c1)", parse: parseActor }) },
  examples: ["reef ping counter/c1", "reef ping counter/c1 --relay counter/c2,replica/r1"],
  run: (input, context) =>
    Effect.gen(function* () {
      const { pingActor } = yield* Effect.promise(() => import("./gateway.js"))
      const started = performance.now()
      const reply = yield* pingActor(context, input.target, input.relay, input.payload)
      return { reply, ms: performance.now() - started } satisfies PingResult
    }),
  text: (r: PingResult) =>
    `${r.reply.hops.map((h) => `${h.address?.role}/${h.address?.id} (pid ${h.pid})`).join(" -> ")}: ${r.ms.toFixed(1)} ms`,
  json: (r: PingResult) => ({
    ms: r.ms,
    payload: r.reply.payload,
    hops: r.reply.hops.map((h) => ({
      role: h.address?.role,
      id: h.address?.id,
      pid: h.pid,
      incarnation: h.incarnation
    }))
  })
})
