/**
 * What the machine was doing around a measurement: the load average (from `os.loadavg`, which counts every
 * runnable process, ours included) and, between two readings of /proc/stat, the share of CPU time stolen by
 * the hypervisor and the share the whole machine was busy. A pair of runs is "busy" when the load average
 * at either end is above `busyLoadavg` (default twice the cores: someone else is using at least as much CPU
 * as this benchmark can) or the steal share is above `busyStealPct`.
 */
import { readFileSync } from "node:fs"
import { cpus, loadavg } from "node:os"

export interface CpuTicks {
  readonly total: number
  readonly idle: number
  readonly steal: number
}

/** The aggregate `cpu` line of /proc/stat; zeros where there is none (not Linux). */
export const readCpuTicks = (stat?: string): CpuTicks => {
  try {
    const line = (stat ?? readFileSync("/proc/stat", "utf8")).split("\n")[0] ?? ""
    const [, ...fields] = line.trim().split(/\s+/)
    // user nice system idle iowait irq softirq steal (guest time is already counted in user)
    const t = fields.slice(0, 8).map(Number)
    return { total: t.reduce((a, b) => a + b, 0), idle: (t[3] ?? 0) + (t[4] ?? 0), steal: t[7] ?? 0 }
  } catch {
    return { total: 0, idle: 0, steal: 0 }
  }
}

export interface MachineReading {
  readonly at: number
  readonly loadavg1: number
  readonly ticks: CpuTicks
}

export const readMachine = (): MachineReading => ({
  at: Date.now(),
  loadavg1: round2(loadavg()[0] ?? 0),
  ticks: readCpuTicks()
})

/** The machine over an interval, as recorded beside every pair of runs. */
export interface MachineInterval {
  readonly loadavgBefore: number
  readonly loadavgAfter: number
  /** % of CPU time stolen by the hypervisor over the interval. */
  readonly stealPct: number
  /** % of CPU time the whole machine (this benchmark included) was busy. */
  readonly busyPct: number
  readonly seconds: number
}

export const intervalBetween = (before: MachineReading, after: MachineReading): MachineInterval => {
  const total = after.ticks.total - before.ticks.total
  const share = (x: number) => (total > 0 ? round2((100 * x) / total) : 0)
  return {
    loadavgBefore: before.loadavg1,
    loadavgAfter: after.loadavg1,
    stealPct: share(after.ticks.steal - before.ticks.steal),
    busyPct: share(total - (after.ticks.idle - before.ticks.idle)),
    seconds: round2((after.at - before.at) / 1000)
  }
}

export interface BusyPolicy {
  readonly busyLoadavg: number
  readonly busyStealPct: number
}

const envNumber = (name: string): number | undefined => {
  const v = process.env[name]
  return v === undefined || v === "" || !Number.isFinite(Number(v)) ? undefined : Number(v)
}

export const defaultBusyPolicy = (): BusyPolicy => ({
  busyLoadavg: envNumber("REEF_BENCH_BUSY_LOADAVG") ?? 2 * cpus().length,
  busyStealPct: envNumber("REEF_BENCH_BUSY_STEAL_PCT") ?? 10
})

export const isBusy = (m: MachineInterval, policy: BusyPolicy): boolean =>
  Math.max(m.loadavgBefore, m.loadavgAfter) > policy.busyLoadavg || m.stealPct > policy.busyStealPct

const round2 = (x: number) => Math.round(x * 100) / 100
