/**
 * The counter role: a small real actor that exercises the whole kernel (tell, ask, batches, failures,
 * supervision). `reef up` runs it for the main workload and `pnpm bench kernel` measures with it.
 */
import { CounterAdd, CounterFail, CounterGet, CounterValue, ErrorCode } from "@reef/proto"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import { defineActor, onAsk, onTellBatch, rpc } from "./actor.js"
import { HandlerError } from "./errors.js"

export const CounterAddRpc = rpc(CounterAdd, CounterValue)
export const CounterGetRpc = rpc(CounterGet, CounterValue)
export const CounterFailRpc = rpc(CounterFail, CounterValue)

export interface CounterState {
  readonly values: ReadonlyMap<string, number>
  readonly adds: number
}

const add = (state: CounterState, key: string, amount: number): CounterState => ({
  values: new Map(state.values).set(key, (state.values.get(key) ?? 0) + amount),
  adds: state.adds + 1
})

const addAll = (state: CounterState, adds: ReadonlyArray<CounterAdd>): CounterState => {
  const values = new Map(state.values)
  for (const { key, amount } of adds) values.set(key, (values.get(key) ?? 0) + amount)
  return { values, adds: state.adds + adds.length }
}

const counterValue = (state: CounterState, key: string): CounterValue => ({
  key,
  value: state.values.get(key) ?? 0,
  adds: state.adds
})

export const counterActor = defineActor<CounterState>({
  role: "counter",
  description: "Reef demo counter",
  initialState: Effect.succeed({ values: new Map(), adds: 0 }),
  handlers: [
    // Tells arrive in groups (tellMany): one state update per group, not per message.
    onTellBatch(CounterAdd, (adds, { state }) => Ref.update(state, (s) => addAll(s, adds))),
    onAsk(CounterAddRpc, (m, { state }) =>
      Ref.modify(state, (s): [CounterValue, CounterState] => {
        const next = add(s, m.key, m.amount)
        return [counterValue(next, m.key), next]
      })
    ),
    onAsk(CounterGetRpc, (m, { state }) => Effect.map(Ref.get(state), (s) => counterValue(s, m.key))),
    onAsk(CounterFailRpc, (m) =>
      m.defect
        ? Effect.die(new Error(`requested defect: ${m.reason}`))
        : Effect.fail(
            new HandlerError({ code: ErrorCode.ERROR_CODE_HANDLER_FAILED, message: `requested failure: ${m.reason}` })
          )
    )
  ]
})
