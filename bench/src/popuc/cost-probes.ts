/**
 * Where a committed write's CPU and bytes go, read from outside the processes: per-thread CPU from
 * /proc/<pid>/task (the engine thread names itself `reef-engine`, @reef/nic thread-name.ts), and per
 * connection bytes from nats-server's monitoring endpoint (`/connz`, each engine's connection is named
 * `reef-nic-<group>-<id>`). Nothing here asks the measured processes for anything, so it costs them nothing.
 */
import { readdirSync, readFileSync } from "node:fs"
import { ENGINE_THREAD_NAME } from "@reef/nic"
import { procCpuSeconds } from "../peers/proc.js"

const CLOCK_TICKS = 100 // USER_HZ (getconf CLK_TCK), as in peers/proc.ts

/** user+sys CPU seconds of one thread from its /proc stat line; undefined once it is gone. */
const taskCpuSeconds = (pid: number, tid: string): number | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
  } catch {
    return undefined
  }
}

const taskName = (pid: number, tid: string): string | undefined => {
  try {
    return readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim()
  } catch {
    return undefined
  }
}

/** A replica process's CPU seconds so far: the whole process, and its engine thread(s) alone. */
export interface ReplicaCpu {
  readonly total: number
  readonly engine: number
}

export const replicaCpu = (pid: number): ReplicaCpu | undefined => {
  const total = procCpuSeconds(pid)
  if (total === undefined) return undefined
  let engine = 0
  let tids: Array<string> = []
  try {
    tids = readdirSync(`/proc/${pid}/task`)
  } catch {
    return undefined
  }
  for (const tid of tids) {
    if (taskName(pid, tid) === ENGINE_THREAD_NAME) engine += taskCpuSeconds(pid, tid) ?? 0
  }
  return { total, engine }
}

/** Bytes one client connection put on the wire (`sent`, the server's in_bytes) and got (`received`). */
export interface ConnectionBytes {
  readonly sent: number
  readonly received: number
  /** Messages published and delivered. */
  readonly msgsSent: number
  readonly msgsReceived: number
}

interface Connz {
  readonly connections?: ReadonlyArray<{
    readonly name?: string
    readonly in_bytes: number
    readonly out_bytes: number
    readonly in_msgs: number
    readonly out_msgs: number
  }>
}

/** Bytes per named connection so far, from `<monitorUrl>/connz`. */
export const connectionBytes = async (monitorUrl: string): Promise<Map<string, ConnectionBytes>> => {
  const response = await fetch(`${monitorUrl}/connz?limit=4096`)
  if (!response.ok) throw new Error(`nats-server /connz answered ${response.status}`)
  const connz = (await response.json()) as Connz
  const bytes = new Map<string, ConnectionBytes>()
  for (const c of connz.connections ?? []) {
    if (c.name === undefined || c.name === "") continue
    const known = bytes.get(c.name)
    bytes.set(c.name, {
      sent: (known?.sent ?? 0) + c.in_bytes,
      received: (known?.received ?? 0) + c.out_bytes,
      msgsSent: (known?.msgsSent ?? 0) + c.in_msgs,
      msgsReceived: (known?.msgsReceived ?? 0) + c.out_msgs
    })
  }
  return bytes
}

/** The name of a replica engine's NATS connection (engine-worker.ts). */
export const engineConnectionName = (group: string, id: string): string => `reef-nic-${group}-${id}`
