/**
 * Spans for consensus instances, created after the fact from what the engine reports (the engine thread has
 * no tracer): one `popuc.instance` span from proposal to decision, with its rounds as child spans, started
 * in the past with the tracer's own API. Only when tracing is on.
 */
import type { AppliedBatch } from "@reef/nic"
import { MessagingTracing } from "@reef/observability/tracing"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as Tracer from "effect/Tracer"

const msToNs = (ms: number) => BigInt(Math.round(ms * 1e6))

export const recordInstanceSpan = (
  group: string,
  replica: string,
  batch: AppliedBatch
): Effect.Effect<Tracer.Span | undefined> =>
  Effect.gen(function* () {
    if (!(yield* MessagingTracing)) return undefined
    const tracer = yield* Effect.tracer
    const nowNs = msToNs(performance.timeOrigin + performance.now())
    const startNs = nowNs - msToNs(batch.elapsedMs)
    const span = tracer.span(
      `popuc.instance ${batch.instance}`,
      Option.none(),
      Context.empty(),
      [],
      startNs,
      "internal",
      {
        attributes: {
          "popuc.group": group,
          "popuc.replica": replica,
          "popuc.engine": batch.engine,
          "popuc.instance": batch.instance,
          "popuc.rounds": batch.rounds,
          "popuc.decided_set_size": batch.decidedSetSize,
          "popuc.delivered": batch.values.length
        }
      }
    )
    const starts = batch.roundStartsAgoMs
    starts.forEach((agoMs, i) => {
      const roundStart = nowNs - msToNs(agoMs)
      const roundEnd = i + 1 < starts.length ? nowNs - msToNs(starts[i + 1]!) : nowNs
      const round = tracer.span(
        `popuc.round ${i + 1}`,
        Option.some(span),
        Context.empty(),
        [],
        roundStart,
        "internal",
        {
          attributes: { "popuc.instance": batch.instance, "popuc.round": i + 1 }
        }
      )
      round.end(roundEnd, Exit.void)
    })
    span.end(nowNs, Exit.void)
    return span
  })
