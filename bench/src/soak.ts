/**
 * Suite `soak`: is memory flat under sustained load? A 3-replica POPUC group (each replica process also
 * runs its NIC engine thread) serves colocated Sets and Gets for `--minutes` (10 by default, 1 with
 * --quick) while this process samples every replica's resident set size. Reported per replica: RSS after
 * the first minute, at half time and at the end (medians over a minute: the allocator hands freed pages
 * back every few seconds, so RSS under load swings by tens of MB and one sample may be a peak or a trough),
 * the peak, and the growth rate over the second half (least squares, MB/min). Bounded caches (the decision
 * log peers catch up from, V8's heap sizing) fill during the first minutes; a leak keeps growing in the
 * second half, which end / mid shows (a check, not a ratio between two systems).
 *
 * Writes bench/results/soak.json and bench/results/soak-rss.svg (RSS over time per replica).
 */
import { makeOutput } from "@reef/devkit/output"
import { startNatsServer } from "@reef/kernel"
import * as Effect from "effect/Effect"
import { machineNow, readMachine, spreadOf, writeResult } from "./harness/index.js"
import { runKvLoad } from "./kv-load.js"
import { engineStates, procMemoryMb, startGroup } from "./popuc-group.js"
import { printTable, round } from "./report.js"

const SAMPLE_EVERY_MS = 10_000
const FIRST_MINUTE = 1
const LOAD_SLICE_MS = 10_000

/** Least-squares slope of y over x. */
export const slope = (points: ReadonlyArray<readonly [number, number]>): number => {
  const n = points.length
  if (n < 2) return 0
  const mx = points.reduce((s, p) => s + p[0], 0) / n
  const my = points.reduce((s, p) => s + p[1], 0) / n
  const sxx = points.reduce((s, p) => s + (p[0] - mx) ** 2, 0)
  const sxy = points.reduce((s, p) => s + (p[0] - mx) * (p[1] - my), 0)
  return sxx === 0 ? 0 : sxy / sxx
}

/** Median of the values sampled at minutes [from, to); NaN if none was. */
export const medianBetween = (points: ReadonlyArray<readonly [number, number]>, from: number, to: number): number => {
  const values = points
    .filter(([minute]) => minute >= from && minute < to)
    .map(([, value]) => value)
    .sort((a, b) => a - b)
  if (values.length === 0) return Number.NaN
  const middle = values.length >> 1
  return values.length % 2 === 1 ? values[middle]! : (values[middle - 1]! + values[middle]!) / 2
}

export const run = async (quick: boolean, flags: ReadonlyArray<string> = []) => {
  const minutesFlag = flags.indexOf("--minutes")
  const minutes = minutesFlag >= 0 ? Number(flags[minutesFlag + 1]) : quick ? 1 : 10
  if (!(minutes > 0)) throw new Error("soak: --minutes must be a positive number")
  const started = readMachine()
  const durationMs = minutes * 60_000
  const samples = new Map<string, Array<readonly [number, number]>>()
  let operations = 0
  let errors = 0
  let selfQuits = 0

  await Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const nats = yield* startNatsServer({ jetstream: false })
        const group = yield* startGroup(nats.url, 3, "soak")
        const t0 = performance.now()
        const sample = () => {
          const minute = (performance.now() - t0) / 60_000
          group.children.forEach((child, i) => {
            const rss = child.pid === undefined ? undefined : procMemoryMb(child.pid, "VmRSS")
            if (rss === undefined) return
            const id = group.ids[i]!
            samples.set(id, [...(samples.get(id) ?? []), [round(minute, 3), rss] as const])
          })
        }
        sample()
        const sampler = setInterval(sample, SAMPLE_EVERY_MS)
        // Where the soak is: a status line on a terminal (after each slice), a plain line a minute otherwise.
        const out = makeOutput()
        let linesPrinted = 0
        const progress = () => {
          const elapsed = (performance.now() - t0) / 60_000
          const text = `soak: ${elapsed.toFixed(1)} of ${minutes} min, ${operations.toLocaleString("en-US")} operations, ${errors} errors`
          if (out.live) out.status(text)
          else if (Math.floor(elapsed) > linesPrinted) {
            linesPrinted = Math.floor(elapsed)
            out.line(text)
          }
        }
        // Load in slices, alternating Sets and Gets, so a slow slice never stretches the soak.
        for (let slice = 0; performance.now() - t0 < durationMs; slice++) {
          const load = yield* runKvLoad({
            addresses: group.addresses,
            mode: "colocated",
            op: slice % 2 === 0 ? "set" : "get",
            concurrency: 128,
            durationMs: Math.min(LOAD_SLICE_MS, Math.max(1, durationMs - (performance.now() - t0)))
          })
          operations += load.ops
          errors += load.errors
          progress()
        }
        out.status("")
        clearInterval(sampler)
        sample()
        const states = yield* engineStates(group)
        for (const s of states) if (s._tag === "Some") selfQuits += s.value.engine?.selfQuits ?? 0
      })
    )
  )

  const rows = [...samples].map(([id, points]) => {
    const at = (minute: number) => points.find(([m]) => m >= minute)?.[1] ?? Number.NaN
    const secondHalf = points.filter(([minute]) => minute >= minutes / 2)
    const window = Math.min(1, minutes / 4)
    const mid = medianBetween(points, minutes / 2, minutes / 2 + window)
    // The last sample is taken at the end itself: the window includes it.
    const last = medianBetween(points, minutes - window, Number.POSITIVE_INFINITY)
    return {
      id,
      rssFirstMinuteMb: at(Math.min(FIRST_MINUTE, minutes / 2)),
      rssMidMb: round(mid, 1),
      rssEndMb: round(last, 1),
      rssPeakMb: Math.max(...points.map((p) => p[1])),
      secondHalfGrowthMbPerMin: round(slope(secondHalf), 2),
      endOverMid: round(last / mid, 3)
    }
  })
  const endOverMid = spreadOf(rows.map((r) => r.endOverMid))
  printTable(
    `Soak: 3 replicas, 128 in flight, ${minutes} min${quick ? " (quick)" : ""}`,
    ["replica", "RSS 1 min", "RSS mid", "RSS end", "RSS peak", "2nd half MB/min", "end / mid"],
    rows.map((r) => [
      r.id,
      r.rssFirstMinuteMb,
      r.rssMidMb,
      r.rssEndMb,
      r.rssPeakMb,
      r.secondHalfGrowthMbPerMin,
      r.endOverMid
    ])
  )
  console.log(`\n${operations} operations (${errors} errors, ${selfQuits} self-quits) in ${minutes} min`)
  console.log(`RSS end / mid over replicas: median ${endOverMid.median}, ${endOverMid.min}–${endOverMid.max}`)
  const path = await writeResult({
    suite: "soak",
    quick,
    command: `pnpm bench soak${quick ? " --quick" : ` --minutes ${minutes}`}`,
    machine: machineNow(started),
    // Memory over time is a check, not a comparison of two systems: it has no ratio.
    ratios: {},
    metrics: {
      minutes,
      operations,
      errors,
      selfQuits,
      operationsPerSec: round(operations / (durationMs / 1000), 0),
      rssEndOverMid: {
        ...endOverMid,
        note: "per replica, RSS at the end over RSS at half time (medians over a window); median and min–max over the 3 replicas"
      },
      replicas: Object.fromEntries(rows.map((r) => [r.id, r])),
      samples: Object.fromEntries([...samples].map(([id, points]) => [id, points.map((p) => [...p])]))
    },
    curves: {
      rss: {
        title: `Replica RSS under sustained load (${minutes} min, 128 writes and reads in flight)`,
        x: { title: "time (minutes)" },
        y: { title: "resident set size (MB)" },
        pointMarks: false,
        points: [...samples].flatMap(([id, points]) => points.map(([x, y]) => ({ series: `replica ${id}`, x, y })))
      }
    }
  })
  console.log(`wrote ${path}`)
}
