/**
 * The cluster file: where `reef up` writes the endpoints of the cluster it runs (`.reef/cluster.json` in the
 * directory it was started from), so `reef run`, `reef status` and the data-plane commands in another
 * terminal find the cluster with no flags. Found like git finds `.git`: `--cluster-file`, else
 * `REEF_CLUSTER_FILE`, else the nearest `.reef/cluster.json` in the current directory or above it.
 *
 * A file whose `reef up` process has exited is stale: it is ignored (and replaced by the next `reef up`).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import type { ClusterSecurityFile } from "./cluster-security.js"

export const CLUSTER_FILE_VERSION = 1
export const CLUSTER_FILE_NAME = join(".reef", "cluster.json")

export interface ClusterActor {
  readonly role: string
  readonly id: string
  readonly pid?: number
  readonly endpoints: Readonly<Record<string, string>>
}

export interface ClusterFile {
  readonly version: typeof CLUSTER_FILE_VERSION
  readonly cluster: string
  /** The `reef up` process; the file is stale once it is gone. */
  readonly pid: number
  readonly startedAt: string
  readonly nats: {
    readonly url: string
    /** nats-server's HTTP monitoring endpoint (`/varz`, `/connz`), when `reef up` runs the server. */
    readonly monitor?: string
    readonly embedded: boolean
  }
  /** With `reef up --secure` or `--tls`: where the identities, certificates and token are (cluster-security.ts). */
  readonly security?: ClusterSecurityFile
  /** `host:port` of the gateway's gRPC service. */
  readonly gateway: string
  /** Where Prometheus finds every actor process (file_sd format), kept current by `reef up`. */
  readonly prometheusTargets?: string
  readonly actors: ReadonlyArray<ClusterActor>
}

export type ClusterFileLookup =
  | { readonly _tag: "Found"; readonly path: string; readonly file: ClusterFile }
  | { readonly _tag: "Stale"; readonly path: string; readonly file: ClusterFile }
  | { readonly _tag: "Invalid"; readonly path: string; readonly reason: string }
  | { readonly _tag: "Missing"; readonly searched: string }

/** Whether process `pid` exists (signal 0 checks without sending anything). */
export const processAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** The nearest `.reef/cluster.json` at or above `from`. */
export const findClusterFilePath = (from: string): string | undefined => {
  let dir = resolve(from)
  for (;;) {
    const candidate = join(dir, CLUSTER_FILE_NAME)
    if (existsSync(candidate)) return candidate
    const parent = dirname(dir)
    if (parent === dir) return undefined
    dir = parent
  }
}

const isClusterFile = (value: unknown): value is ClusterFile => {
  const v = value as Partial<ClusterFile> | null
  return (
    typeof v === "object" &&
    v !== null &&
    v.version === CLUSTER_FILE_VERSION &&
    typeof v.cluster === "string" &&
    typeof v.pid === "number" &&
    typeof v.nats?.url === "string" &&
    typeof v.gateway === "string" &&
    Array.isArray(v.actors)
  )
}

export const readClusterFile = (
  explicit: string | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
  cwd: string = process.cwd(),
  alive: (pid: number) => boolean = processAlive
): ClusterFileLookup => {
  const given = explicit ?? (env.REEF_CLUSTER_FILE === "" ? undefined : env.REEF_CLUSTER_FILE)
  const path = given === undefined ? findClusterFilePath(cwd) : resolve(cwd, given)
  if (path === undefined) return { _tag: "Missing", searched: join(resolve(cwd), CLUSTER_FILE_NAME) }
  if (!existsSync(path)) return { _tag: "Missing", searched: path }
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"))
  } catch (error) {
    return { _tag: "Invalid", path, reason: (error as Error).message }
  }
  if (!isClusterFile(parsed))
    return { _tag: "Invalid", path, reason: `not a version ${CLUSTER_FILE_VERSION} cluster file` }
  return alive(parsed.pid) ? { _tag: "Found", path, file: parsed } : { _tag: "Stale", path, file: parsed }
}

/** Writes the file atomically (readers never see half of it). */
export const writeClusterFile = (path: string, file: ClusterFile): void => {
  mkdirSync(dirname(path), { recursive: true })
  const temporary = `${path}.${process.pid}.tmp`
  writeFileSync(temporary, `${JSON.stringify(file, null, 2)}\n`)
  renameSync(temporary, path)
}

/** Removes the file if it is still this process's (another `reef up` may have taken the directory over). */
export const removeClusterFile = (path: string, pid: number = process.pid): void => {
  try {
    const current = JSON.parse(readFileSync(path, "utf8")) as Partial<ClusterFile>
    if (current.pid === pid) rmSync(path, { force: true })
  } catch {
    // Gone or unreadable: nothing of ours to remove.
  }
}

/** Where `reef up` started from `cwd` writes its cluster file by default. */
export const defaultClusterFilePath = (cwd: string = process.cwd()): string => join(resolve(cwd), CLUSTER_FILE_NAME)

/** Where the cluster file was named, if it was: `--cluster-file` or `$REEF_CLUSTER_FILE` (else it is searched). */
export const clusterFileNamed = (
  explicit: string | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env
): string | undefined =>
  explicit !== undefined
    ? "--cluster-file"
    : env.REEF_CLUSTER_FILE !== undefined && env.REEF_CLUSTER_FILE !== ""
      ? "$REEF_CLUSTER_FILE"
      : undefined

/** One line saying why no running cluster was found (the file, and who named it), and what to do. */
export const noClusterMessage = (lookup: Exclude<ClusterFileLookup, { _tag: "Found" }>, namedBy?: string): string => {
  const via = namedBy === undefined ? "" : ` (from ${namedBy})`
  switch (lookup._tag) {
    case "Missing":
      return `no running cluster: ${lookup.searched}${via} not found (start one with 'reef up')`
    case "Stale":
      return `no running cluster: ${lookup.path}${via} is left from reef up (pid ${lookup.file.pid}), which has exited (start one with 'reef up')`
    case "Invalid":
      return `cannot read ${lookup.path}${via}: ${lookup.reason}`
  }
}
