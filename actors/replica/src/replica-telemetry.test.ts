import type { AppliedBatch } from "@reef/nic"
import { EngineState, StateResponse } from "@reef/proto"
import * as Metric from "effect/Metric"
import { describe, expect, it } from "vitest"
import { ReplicaTelemetry } from "./replica-telemetry.js"

const batch = (instance: number, rounds: number, elapsedMs: number): AppliedBatch => ({
  engine: 0,
  instance,
  rounds,
  decidedSetSize: 3,
  suspects: [],
  values: [],
  elapsedMs,
  roundStartsAgoMs: []
})

const state = (appliedInstance: number, roundsDecided: number, appliedCommands: number) =>
  StateResponse.fromPartial({
    replica: "r1",
    appliedInstance,
    appliedCommands,
    keys: 4,
    engine: EngineState.fromPartial({ roundsDecided, pending: 2, roundPeriodMs: 12 })
  })

/** Values of this test's series only (the registry is global to the process). */
const series = (name: string, replica: string) =>
  Metric.unsafeSnapshot()
    .filter(
      (p) => p.metricKey.name === name && p.metricKey.tags.some((t) => t.key === "replica" && t.value === replica)
    )
    .map((p) => ({ tags: Object.fromEntries(p.metricKey.tags.map((t) => [t.key, t.value])), state: p.metricState }))

describe("ReplicaTelemetry", () => {
  it("counts instances, rounds, self-quits and rejoins as they happen", () => {
    const telemetry = new ReplicaTelemetry("kv", "rt1")
    telemetry.onApplied(batch(1, 2, 3.5))
    telemetry.onApplied(batch(2, 3, 40))
    telemetry.onSelfQuit()
    telemetry.onRejoined("learner")
    telemetry.onSelfQuit()
    telemetry.onRejoined("transfer")
    expect(series("reef_popuc_instances_decided_total", "rt1")[0]?.state).toMatchObject({ count: 2 })
    expect(series("reef_popuc_rounds_total", "rt1")[0]?.state).toMatchObject({ count: 5 })
    expect(series("reef_popuc_self_quits_total", "rt1")[0]).toMatchObject({
      tags: { group: "kv", replica: "rt1" },
      state: { count: 2 }
    })
    expect(
      series("reef_popuc_rejoins_total", "rt1")
        .map((s) => [s.tags.how, (s.state as any).count])
        .sort()
    ).toEqual([
      ["learner", 1],
      ["transfer", 1]
    ])
    expect(series("reef_popuc_instance_duration_ms", "rt1")[0]?.state).toMatchObject({ count: 2, sum: 43.5 })
  })

  it("exports every series from the start, and times requests by operation", () => {
    const telemetry = new ReplicaTelemetry("kv", "rt3")
    expect(series("reef_popuc_self_quits_total", "rt3")[0]?.state).toMatchObject({ count: 0 })
    expect(
      series("reef_kv_request_duration_ms", "rt3")
        .map((s) => s.tags.op)
        .sort()
    ).toEqual(["compareAndSet", "delete", "get", "set"])
    telemetry.onRequestDone("set", 3)
    telemetry.onRequestDone("set", 5)
    telemetry.onRequestDone("nonsense", 5)
    const set = series("reef_kv_request_duration_ms", "rt3").find((s) => s.tags.op === "set")
    expect(set?.state).toMatchObject({ count: 2, sum: 8 })
  })

  it("reports rates over the time between heartbeats, and samples the state's gauges", () => {
    const telemetry = new ReplicaTelemetry("kv", "rt2")
    expect(telemetry.status(state(100, 200, 50), false, 10_000)).toEqual({
      group: "kv",
      applied: "100",
      "rounds/s": "0",
      "instances/s": "0.0",
      "self-quits": "0",
      rejoins: "0",
      rejoining: "no"
    })
    telemetry.onSelfQuit()
    expect(telemetry.status(state(150, 300, 80), true, 10_500)).toEqual({
      group: "kv",
      applied: "150",
      "rounds/s": "200",
      "instances/s": "100.0",
      "self-quits": "1",
      rejoins: "0",
      rejoining: "yes"
    })
    expect(series("reef_popuc_applied_instance", "rt2")[0]?.state).toMatchObject({ value: 150 })
    expect(series("reef_kv_keys", "rt2")[0]?.state).toMatchObject({ value: 4 })
    // A snapshot install may move the applied-commands count back: the counter never does.
    telemetry.status(state(160, 320, 60), false, 11_000)
    telemetry.status(state(170, 340, 90), false, 11_500)
    expect(series("reef_kv_commands_applied_total", "rt2")[0]?.state).toMatchObject({ count: 90 })
  })
})
