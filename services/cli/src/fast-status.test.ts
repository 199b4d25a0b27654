/**
 * `reef status`'s fast path: it takes only the options it answers exactly like the full command, and what it
 * loads (the bundle `pnpm build` writes) holds neither Effect nor grpc-js, whose compilation was most of
 * `reef status`'s time.
 */
import { existsSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { reefStatusEntry } from "@reef/devkit"
import { describe, expect, it } from "vitest"
import { parseFastStatus } from "./fast-status.js"

describe("reef status's fast path", () => {
  it("takes the plain options and leaves everything else to the full command", () => {
    expect(parseFastStatus(["status"])).toEqual({ json: false, role: "", timeoutMs: 10_000 })
    expect(parseFastStatus(["status", "-o", "json", "--role", "replica", "--cluster-file", "x.json"])).toEqual({
      json: true,
      role: "replica",
      timeoutMs: 10_000,
      clusterFile: "x.json"
    })
    expect(parseFastStatus(["status", "--json", "--gateway", "127.0.0.1:50051", "--timeout", "500"])).toMatchObject({
      json: true,
      gateway: "127.0.0.1:50051",
      timeoutMs: 500
    })
    for (const argv of [
      ["kv", "get", "a"],
      ["status", "--watch"],
      ["status", "-w"],
      ["status", "--verbose"],
      ["status", "--help"],
      ["status", "-o", "yaml"],
      ["status", "--role"],
      ["status", "--role", "a.b"],
      ["status", "--timeout", "0"],
      ["status", "extra"]
    ]) {
      expect(parseFastStatus(argv), argv.join(" ")).toBeUndefined()
    }
  })

  const bundle = reefStatusEntry("bundle")!
  it.runIf(existsSync(bundle))("loads neither Effect nor grpc-js (the built bundle's module graph)", () => {
    const files = new Set<string>()
    const queue = [bundle]
    while (queue.length > 0) {
      const file = queue.pop()!
      if (files.has(file)) continue
      files.add(file)
      for (const m of readFileSync(file, "utf8").matchAll(/(?:from|import)\s*\(?\s*"(\.\/[^"]+\.mjs)"/g)) {
        queue.push(join(dirname(file), m[1]!))
      }
    }
    // esbuild marks each bundled module with its path: the packages the fast path carries.
    const packages = new Set<string>()
    for (const file of files) {
      for (const m of readFileSync(file, "utf8").matchAll(/node_modules\/((?:@[^/]+\/)?[^/.][^/]*)\//g)) {
        packages.add(m[1]!)
      }
    }
    expect([...packages].filter((p) => p === "effect" || p.startsWith("@effect/") || p.startsWith("@grpc/"))).toEqual(
      []
    )
    expect(packages).toContain("@bufbuild/protobuf")
  })
})
