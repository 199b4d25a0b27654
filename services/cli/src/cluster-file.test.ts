import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import {
  type ClusterFile,
  noClusterMessage,
  readClusterFile,
  removeClusterFile,
  writeClusterFile
} from "./cluster-file.js"

const dirs: Array<string> = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})
const project = () => {
  const dir = mkdtempSync(join(tmpdir(), "reef-cluster-file-"))
  dirs.push(dir)
  return dir
}

const file = (pid: number): ClusterFile => ({
  version: 1,
  cluster: "local",
  pid,
  startedAt: "2026-01-01T00:00:00.000Z",
  nats: { url: "nats://127.0.0.1:4222", monitor: "http://127.0.0.1:8222", embedded: true },
  gateway: "127.0.0.1:50051",
  actors: [{ role: "replica", id: "r1", endpoints: { kv: "127.0.0.1:7001" } }]
})

describe("the cluster file", () => {
  it("is found in the directory reef up started from, or any directory below it", () => {
    const root = project()
    writeClusterFile(join(root, ".reef", "cluster.json"), file(process.pid))
    const deep = join(root, "a", "b")
    mkdirSync(deep, { recursive: true })
    const found = readClusterFile(undefined, {}, deep)
    expect(found).toMatchObject({
      _tag: "Found",
      path: join(root, ".reef", "cluster.json"),
      file: { cluster: "local" }
    })
  })

  it("prefers --cluster-file, then REEF_CLUSTER_FILE", () => {
    const root = project()
    const elsewhere = join(root, "other.json")
    writeClusterFile(elsewhere, { ...file(process.pid), cluster: "other" })
    writeClusterFile(join(root, ".reef", "cluster.json"), file(process.pid))
    expect(readClusterFile(elsewhere, {}, root)).toMatchObject({ file: { cluster: "other" } })
    expect(readClusterFile(undefined, { REEF_CLUSTER_FILE: elsewhere }, root)).toMatchObject({
      file: { cluster: "other" }
    })
    expect(readClusterFile(undefined, { REEF_CLUSTER_FILE: "" }, root)).toMatchObject({ file: { cluster: "local" } })
  })

  it("is stale once its reef up has exited, and says so in one line", () => {
    const root = project()
    writeClusterFile(join(root, ".reef", "cluster.json"), file(424242))
    const lookup = readClusterFile(undefined, {}, root, (pid) => pid !== 424242)
    expect(lookup._tag).toBe("Stale")
    if (lookup._tag !== "Found") expect(noClusterMessage(lookup)).toMatch(/pid 424242\), which has exited/)
    const missing = readClusterFile(undefined, {}, project())
    expect(missing._tag).toBe("Missing")
    if (missing._tag !== "Found") expect(noClusterMessage(missing)).toContain("start one with 'reef up'")
  })

  it("refuses what is not a cluster file", () => {
    const root = project()
    mkdirSync(join(root, ".reef"))
    writeFileSync(join(root, ".reef", "cluster.json"), "{ not json")
    expect(readClusterFile(undefined, {}, root)._tag).toBe("Invalid")
    writeFileSync(join(root, ".reef", "cluster.json"), JSON.stringify({ version: 99 }))
    const lookup = readClusterFile(undefined, {}, root)
    expect(lookup).toMatchObject({ _tag: "Invalid", reason: "not a version 1 cluster file" })
  })

  it("is removed only by the reef up that wrote it", () => {
    const path = join(project(), ".reef", "cluster.json")
    writeClusterFile(path, file(1234))
    removeClusterFile(path, 5678)
    expect(JSON.parse(readFileSync(path, "utf8")).pid).toBe(1234)
    removeClusterFile(path, 1234)
    expect(readClusterFile(path, {}, "/")._tag).toBe("Missing")
  })
})
