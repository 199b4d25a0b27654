import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import {
  importsOf,
  layeringProblems,
  layerOf,
  readWorkspace,
  splitSpecifier,
  type WorkspacePackage
} from "./layering.js"

const root = join(fileURLToPath(import.meta.url), "..", "..", "..")

const pkg = (
  name: string,
  folder: string,
  options: {
    readonly dependencies?: ReadonlyArray<string>
    readonly exports?: ReadonlyArray<string>
    readonly files?: Record<string, ReadonlyArray<string>>
  } = {}
): WorkspacePackage => ({
  name,
  folder,
  dependencies: options.dependencies ?? [],
  exports: options.exports ?? ["."],
  files: Object.entries(options.files ?? {}).map(([path, imports]) => ({ path: `${folder}/${path}`, imports }))
})

const kernel = pkg("@reef/kernel", "actors/kernel", { exports: [".", "./internal/*"] })
const observability = pkg("@reef/observability", "observability", { exports: [".", "./tracing"] })
const gateway = pkg("@reef/gateway", "services/gateway")
const cli = pkg("@reef/cli", "services/cli")

describe("Reef's packages keep their layers", () => {
  it("the workspace breaks no rule", () => {
    const packages = readWorkspace(root)
    // The check must see the packages it guards, or it proves nothing.
    expect(packages.map((p) => p.name)).toEqual(
      expect.arrayContaining([
        "@reef/kernel",
        "@reef/grpc",
        "@reef/replica",
        "@reef/gateway",
        "@reef/cli",
        "@reef/bench"
      ])
    )
    expect(packages.find((p) => p.name === "@reef/replica")!.files.length).toBeGreaterThan(5)
    expect(layeringProblems(packages)).toEqual([])
  })
})

describe("layeringProblems", () => {
  it("accepts imports from the same layer or below, through public subpaths", () => {
    const replica = pkg("@reef/replica", "actors/replica", {
      dependencies: ["@reef/kernel", "@reef/nic", "@reef/observability"],
      files: { "src/a.ts": ["@reef/kernel", "@reef/nic", "@reef/observability/tracing", "effect/Effect", "./b.js"] }
    })
    const nic = pkg("@reef/nic", "actors/nic", { dependencies: ["@reef/kernel"] })
    expect(layeringProblems([kernel, observability, nic, replica])).toEqual([])
  })

  it("refuses an actor that imports a service", () => {
    const replica = pkg("@reef/replica", "actors/replica", {
      dependencies: ["@reef/gateway"],
      files: { "src/replica.ts": ["@reef/gateway"] }
    })
    expect(layeringProblems([gateway, replica])).toEqual([
      "@reef/replica (actors) depends on @reef/gateway (services), a layer above it (package.json)",
      "actors/replica/src/replica.ts imports @reef/gateway: @reef/gateway (services) is a layer above @reef/replica (actors)"
    ])
  })

  it("refuses importing the cli, a program, even from above it (bench, tests)", () => {
    const bench = pkg("@reef/bench", "bench", {
      dependencies: ["@reef/cli"],
      files: { "src/report.ts": ["@reef/cli"] }
    })
    expect(layeringProblems([cli, bench])).toEqual([
      "bench/src/report.ts imports @reef/cli: a program is started as a process, never imported"
    ])
  })

  it("refuses a service that imports bench", () => {
    const cliUsingBench = pkg("@reef/cli", "services/cli", {
      dependencies: ["@reef/bench"],
      files: { "src/bench.ts": ["@reef/bench"] }
    })
    expect(layeringProblems([cliUsingBench, pkg("@reef/bench", "bench")])).toEqual([
      "@reef/cli (services) depends on @reef/bench (top), a layer above it (package.json)",
      "services/cli/src/bench.ts imports @reef/bench: @reef/bench (top) is a layer above @reef/cli (services)"
    ])
  })

  it("refuses the kernel importing a library above it", () => {
    const kernelUsingGrpc = pkg("@reef/kernel", "actors/kernel", {
      dependencies: ["@reef/grpc"],
      files: { "src/x.ts": ["@reef/grpc"] }
    })
    const problems = layeringProblems([kernelUsingGrpc, pkg("@reef/grpc", "libs/grpc")])
    expect(problems).toContain(
      "actors/kernel/src/x.ts imports @reef/grpc: @reef/grpc (libs) is a layer above @reef/kernel (kernel)"
    )
  })

  it("refuses deep imports of another package's internals", () => {
    const gatewayDeep = pkg("@reef/gateway", "services/gateway", {
      dependencies: ["@reef/kernel", "@reef/observability"],
      files: { "src/a.ts": ["@reef/kernel/src/bus.js", "@reef/observability/config", "@reef/kernel/internal/x"] }
    })
    expect(layeringProblems([kernel, observability, gatewayDeep])).toEqual([
      "services/gateway/src/a.ts imports @reef/kernel/src/bus.js: not part of @reef/kernel's public surface (exports: ., ./internal/*)",
      "services/gateway/src/a.ts imports @reef/observability/config: not part of @reef/observability's public surface (exports: ., ./tracing)"
    ])
  })

  it("refuses relative paths into another package", () => {
    const gatewayByPath = pkg("@reef/gateway", "services/gateway", {
      files: { "src/a.ts": ["../../../actors/kernel/src/bus.js", "../../../vitest.shared.ts"] }
    })
    expect(layeringProblems([kernel, gatewayByPath])).toEqual([
      "services/gateway/src/a.ts imports ../../../actors/kernel/src/bus.js: another package's files (use @reef/kernel)"
    ])
  })

  it("refuses an import package.json does not declare", () => {
    const gatewayUndeclared = pkg("@reef/gateway", "services/gateway", { files: { "src/a.ts": ["@reef/kernel"] } })
    expect(layeringProblems([kernel, gatewayUndeclared])).toEqual([
      "services/gateway/src/a.ts imports @reef/kernel, which @reef/gateway's package.json lacks"
    ])
  })

  it("refuses a package folder without a layer", () => {
    expect(layeringProblems([pkg("@reef/odd", "elsewhere/odd")])).toEqual([
      "@reef/odd (elsewhere/odd) has no layer: add its folder to LAYERS"
    ])
  })

  it("refuses cycles inside a layer", () => {
    const a = pkg("@reef/a", "actors/a", { dependencies: ["@reef/b"] })
    const b = pkg("@reef/b", "actors/b", { dependencies: ["@reef/a"] })
    expect(layeringProblems([a, b])).toEqual(["dependency cycle: @reef/a → @reef/b → @reef/a"])
  })

  it("keeps protocol cores pure: no I/O, no runtime, nothing outside the core but pure packages", () => {
    const nic = pkg("@reef/nic", "actors/nic", {
      dependencies: ["@reef/kernel", "@reef/stats"],
      files: {
        "src/core/tob.ts": [
          "./types.js",
          "@reef/stats",
          "effect/Effect",
          "node:crypto",
          "@reef/kernel",
          "../engine.js"
        ],
        "src/core/tob.test.ts": ["vitest", "../sim/prng.js"],
        "src/engine.ts": ["effect/Effect", "node:worker_threads", "./core/index.js"]
      }
    })
    expect(layeringProblems([kernel, pkg("@reef/stats", "libs/stats"), nic])).toEqual([
      "actors/nic/src/core/tob.ts imports effect/Effect: a core has no I/O, clock or runtime",
      "actors/nic/src/core/tob.ts imports node:crypto: a core has no I/O, clock or runtime",
      "actors/nic/src/core/tob.ts imports @reef/kernel: a core has no I/O, clock or runtime",
      "actors/nic/src/core/tob.ts imports ../engine.js: a core imports nothing outside itself"
    ])
  })

  it("lets a core import another package's pure core export, not its main entry", () => {
    const chain = pkg("@reef/chain", "actors/chain", { exports: [".", "./core"] })
    const backup = pkg("@reef/backup", "actors/backup", {
      dependencies: ["@reef/chain"],
      files: { "src/core/follower.ts": ["@reef/chain/core", "@reef/chain"] }
    })
    expect(layeringProblems([chain, backup])).toEqual([
      "actors/backup/src/core/follower.ts imports @reef/chain: a core has no I/O, clock or runtime"
    ])
  })
})

describe("reading the workspace", () => {
  it("finds static, re-exported, side-effect, dynamic and multi-line imports", () => {
    const text = [
      'import * as Effect from "effect/Effect"',
      "import {",
      "  a,",
      "  b",
      '} from "@reef/kernel"',
      'export { c } from "./c.js"',
      'import "./side-effect.js"',
      'const lazy = () => import("@reef/gateway")',
      'import type { T } from "@reef/proto"'
    ].join("\n")
    expect(importsOf(text).sort()).toEqual(
      ["./c.js", "./side-effect.js", "@reef/gateway", "@reef/kernel", "@reef/proto", "effect/Effect"].sort()
    )
  })

  it("splits a specifier into a package and a subpath", () => {
    expect(splitSpecifier("@reef/observability/tracing")).toEqual({ name: "@reef/observability", subpath: "./tracing" })
    expect(splitSpecifier("@reef/kernel")).toEqual({ name: "@reef/kernel", subpath: "." })
    expect(splitSpecifier("effect/Effect")).toEqual({ name: "effect", subpath: "./Effect" })
  })

  it("gives exact folders their own layer before wildcards", () => {
    expect(layerOf("actors/kernel")?.name).toBe("kernel")
    expect(layerOf("actors/replica")?.name).toBe("actors")
    expect(layerOf("libs/stats")?.name).toBe("foundation")
    expect(layerOf("libs/grpc")?.name).toBe("libs")
    expect(layerOf("libs/grpc/nested")).toBeUndefined()
  })
})
