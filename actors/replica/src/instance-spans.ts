/**
 * Spans for consensus instances, created after the fact from what the engine reports (the engine thread has
 * no tracer): one `popuc.instance` span from proposal to decision, with its rounds as child spans, started
 * in the past with the tracer's own API. The replica records them only when tracing is on (a fiber each).
 * Attributes: instance, rounds, decided-set size, delivered values and the processes this replica suspected.
 */
import type { AppliedBatch } from "@reef/nic"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as Tracer from "effect/Tracer"

const msToNs = (ms: number) => BigInt(Math.round(ms * 1e6))

export const recordInstanceSpan = (group: string, replica: string, batch: AppliedBatch): Effect.Effect<Tracer.Span> =>
  Effect.gen(function* () {
    const tracer = yield* Effect.tracer
    const nowNs = msToNs(performance.timeOrigin + performance.now())
    const startNs = nowNs - msToNs(batch.elapsedMs)
    // The tracer ignores attributes given at creation (Effect's withSpan sets them one by one afterwards too).
    const span = tracer.span(
      `popuc.instance ${batch.instance}`,
      Option.none(),
      Context.empty(),
      [],
      startNs,
      "internal"
    )
    const attributes: Record<string, unknown> = {
      "popuc.group": group,
      "popuc.replica": replica,
      "popuc.engine": batch.engine,
      "popuc.instance": batch.instance,
      "popuc.rounds": batch.rounds,
      "popuc.decided_set_size": batch.decidedSetSize,
      "popuc.delivered": batch.values.length,
      "popuc.suspects": [...batch.suspects]
    }
    for (const [key, value] of Object.entries(attributes)) span.attribute(key, value)
    const starts = batch.roundStartsAgoMs
    starts.forEach((agoMs, i) => {
      const roundStart = nowNs - msToNs(agoMs)
      const roundEnd = i + 1 < starts.length ? nowNs - msToNs(starts[i + 1]!) : nowNs
      const round = tracer.span(`popuc.round ${i + 1}`, Option.some(span), Context.empty(), [], roundStart, "internal")
      round.attribute("popuc.instance", batch.instance)
      round.attribute("popuc.round", i + 1)
      round.end(roundEnd, Exit.void)
    })
    span.end(nowNs, Exit.void)
    return span
  })
