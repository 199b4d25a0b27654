/** Running Effect programs from promise-based harnesses (benchmarks, tests) whose services outlive one call. */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"

/**
 * Runs `effect` with `layer`'s services, both living until `scope` closes (Effect.provide would close the layer
 * as soon as the effect returns).
 */
export const inScope = async <A, R>(
  scope: Scope.CloseableScope,
  layer: Layer.Layer<R, unknown>,
  effect: Effect.Effect<A, unknown, R | Scope.Scope>
): Promise<A> => {
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  return Effect.runPromise(Scope.extend(Effect.provide(effect, context), scope))
}
