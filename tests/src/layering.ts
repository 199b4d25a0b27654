/**
 * The layering of Reef's packages, and the check that keeps it: a package imports only from packages in its
 * own layer or below, only through their public surface (`exports` of their package.json), and only what its
 * package.json declares. A protocol core (`src/core/`) imports nothing with I/O or a clock.
 *
 * Layers, lowest first (a new package folder must be given one here):
 *   0 foundation  proto, observability, libs/stats   (schemas, tracing conventions, pure helpers)
 *   1 kernel      actors/kernel                      (bus, messenger, actor runtime, TurnBatcher, ...)
 *   2 libs        libs/*                             (@reef/grpc hosting, @reef/devkit process helpers)
 *   3 actors      actors/*                           (roles: nic, replica, coordinator, ...)
 *   4 services    services/*                         (gateway, cli)
 *   5 top         tests, bench                       (cross-package tests, benchmarks)
 * Packages of one layer may import each other (replica → nic, cli → gateway) as long as no cycle forms.
 * A program (the `reef` CLI) is imported by nobody, whatever its layer: tools and tests start it as a process
 * (@reef/devkit), and what they share with it lives below it.
 *
 * Pure: `layeringProblems` takes the workspace as data, so its rules are tested on workspaces that break them;
 * `readWorkspace` reads the real one from disk.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, normalize, relative, sep } from "node:path"

export interface LayerRule {
  readonly layer: number
  readonly name: string
  /** Package folders relative to the root: exact (`actors/kernel`) or one level of wildcard (`actors/*`). */
  readonly folders: ReadonlyArray<string>
}

/** Exact folders win over wildcards, so `actors/kernel` is the kernel and every other `actors/*` an actor. */
export const LAYERS: ReadonlyArray<LayerRule> = [
  { layer: 0, name: "foundation", folders: ["proto", "observability", "libs/stats"] },
  { layer: 1, name: "kernel", folders: ["actors/kernel"] },
  { layer: 2, name: "libs", folders: ["libs/*"] },
  { layer: 3, name: "actors", folders: ["actors/*"] },
  { layer: 4, name: "services", folders: ["services/*"] },
  { layer: 5, name: "top", folders: ["tests", "bench"] }
]

/** Programs: run as processes, never imported. */
export const PROGRAMS: ReadonlySet<string> = new Set(["@reef/cli"])

/** Packages a protocol core may import: pure, dependency-free, no I/O. */
export const PURE_PACKAGES: ReadonlySet<string> = new Set(["@reef/stats"])

export interface SourceFile {
  /** Relative to the workspace root, with `/` separators. */
  readonly path: string
  readonly imports: ReadonlyArray<string>
}

export interface WorkspacePackage {
  readonly name: string
  /** Relative to the workspace root, with `/` separators. */
  readonly folder: string
  /** Every dependency of package.json (dependencies, devDependencies, peerDependencies). */
  readonly dependencies: ReadonlyArray<string>
  /** Subpaths of package.json `exports` that resolve to something (`.`, `./tracing`); null ones are left out. */
  readonly exports: ReadonlyArray<string>
  readonly files: ReadonlyArray<SourceFile>
}

export const layerOf = (folder: string, layers: ReadonlyArray<LayerRule> = LAYERS): LayerRule | undefined =>
  layers.find((rule) => rule.folders.includes(folder)) ??
  layers.find((rule) =>
    rule.folders.some((f) => f.endsWith("/*") && dirname(folder) === f.slice(0, -2) && !folder.includes("/", f.length))
  )

/** `@reef/kernel/x/y` → `{ name: "@reef/kernel", subpath: "./x/y" }`; `effect/Effect` → `effect`, `./Effect`. */
export const splitSpecifier = (specifier: string): { readonly name: string; readonly subpath: string } => {
  const parts = specifier.split("/")
  const count = specifier.startsWith("@") ? 2 : 1
  const rest = parts.slice(count).join("/")
  return { name: parts.slice(0, count).join("/"), subpath: rest === "" ? "." : `./${rest}` }
}

const exportMatches = (pattern: string, subpath: string) => {
  if (!pattern.includes("*")) return pattern === subpath
  const [before, after] = pattern.split("*") as [string, string]
  return subpath.startsWith(before) && subpath.endsWith(after) && subpath.length >= before.length + after.length
}

const inside = (folder: string, path: string) => path === folder || path.startsWith(`${folder}/`)

const isTestFile = (path: string) => /\.test\.[cm]?tsx?$/.test(path)

/** Imports a protocol core may not have: I/O, clocks, runtimes, and every Reef package but the pure ones. */
const impureInCore = (specifier: string): boolean =>
  specifier.startsWith("node:") ||
  /^(effect|@effect|@nats-io|@grpc|@opentelemetry|lmdb)(\/|$)/.test(specifier) ||
  (specifier.startsWith("@reef/") && !isPureReefImport(specifier))

/** A pure package, or another package's `core` export: its files are held to the same rule as this core. */
const isPureReefImport = (specifier: string): boolean => {
  const { name, subpath } = splitSpecifier(specifier)
  return PURE_PACKAGES.has(name) || subpath === "./core"
}

/** Every rule the workspace breaks, one sentence each (empty when it keeps them all). */
export const layeringProblems = (
  packages: ReadonlyArray<WorkspacePackage>,
  layers: ReadonlyArray<LayerRule> = LAYERS
): Array<string> => {
  const problems: Array<string> = []
  const byName = new Map(packages.map((p) => [p.name, p]))
  const layer = new Map<string, LayerRule>()
  for (const pkg of packages) {
    const rule = layerOf(pkg.folder, layers)
    if (rule === undefined) problems.push(`${pkg.name} (${pkg.folder}) has no layer: add its folder to LAYERS`)
    else layer.set(pkg.name, rule)
  }
  const above = (from: string, to: string) => {
    const a = layer.get(from)
    const b = layer.get(to)
    return a !== undefined && b !== undefined && b.layer > a.layer
  }
  const describe = (name: string) => `${name} (${layer.get(name)?.name ?? "no layer"})`

  for (const pkg of packages) {
    const declared = new Set(pkg.dependencies)
    for (const dependency of pkg.dependencies) {
      if (byName.has(dependency) && above(pkg.name, dependency)) {
        problems.push(`${describe(pkg.name)} depends on ${describe(dependency)}, a layer above it (package.json)`)
      }
    }
    for (const file of pkg.files) {
      const inCore = !isTestFile(file.path) && /\/src\/(.*\/)?core\//.test(file.path)
      const coreFolder = inCore ? file.path.slice(0, file.path.lastIndexOf("/core/") + "/core".length) : ""
      for (const specifier of file.imports) {
        if (specifier.startsWith(".")) {
          const target = normalize(join(dirname(file.path), specifier))
            .split(sep)
            .join("/")
          const owner = packages.find((p) => p !== pkg && inside(p.folder, target))
          if (owner !== undefined) {
            problems.push(`${file.path} imports ${specifier}: another package's files (use ${owner.name})`)
          }
          if (inCore && !inside(coreFolder, target)) {
            problems.push(`${file.path} imports ${specifier}: a core imports nothing outside itself`)
          }
          continue
        }
        if (inCore && impureInCore(specifier)) {
          problems.push(`${file.path} imports ${specifier}: a core has no I/O, clock or runtime`)
        }
        const { name, subpath } = splitSpecifier(specifier)
        const target = byName.get(name)
        if (target === undefined || target === pkg) continue
        if (PROGRAMS.has(name)) {
          problems.push(`${file.path} imports ${specifier}: a program is started as a process, never imported`)
        }
        if (above(pkg.name, name)) {
          problems.push(`${file.path} imports ${specifier}: ${describe(name)} is a layer above ${describe(pkg.name)}`)
        }
        if (!target.exports.some((pattern) => exportMatches(pattern, subpath))) {
          problems.push(
            `${file.path} imports ${specifier}: not part of ${name}'s public surface (exports: ${target.exports.join(", ")})`
          )
        }
        if (!declared.has(name)) problems.push(`${file.path} imports ${name}, which ${pkg.name}'s package.json lacks`)
      }
    }
  }
  problems.push(...cycles(packages, byName))
  return problems
}

/** Dependency cycles between workspace packages (possible within one layer). */
const cycles = (packages: ReadonlyArray<WorkspacePackage>, byName: ReadonlyMap<string, WorkspacePackage>) => {
  const found: Array<string> = []
  const state = new Map<string, "visiting" | "done">()
  const visit = (name: string, path: Array<string>) => {
    if (state.get(name) === "done") return
    if (state.get(name) === "visiting") {
      found.push(`dependency cycle: ${[...path.slice(path.indexOf(name)), name].join(" → ")}`)
      return
    }
    state.set(name, "visiting")
    for (const dependency of byName.get(name)?.dependencies ?? []) {
      if (byName.has(dependency)) visit(dependency, [...path, name])
    }
    state.set(name, "done")
  }
  for (const pkg of packages) visit(pkg.name, [])
  return found
}

// ---- reading the workspace from disk ------------------------------------------------------------------------

const SOURCE = /\.(m|c)?(t|j)sx?$/
const SKIPPED = new Set(["node_modules", "dist", "results", "go"])

/** Module specifiers of `import`/`export ... from`, `import("...")` and `require("...")` in a source text. */
export const importsOf = (text: string): Array<string> => {
  const found: Array<string> = []
  const patterns = [
    /\b(?:import|export)\s[^'"`;]*?\bfrom\s*["']([^"']+)["']/g,
    /\bimport\s*["']([^"']+)["']/g,
    /\b(?:import|require)\s*\(\s*["']([^"']+)["']\s*\)/g
  ]
  for (const pattern of patterns) for (const match of text.matchAll(pattern)) found.push(match[1]!)
  return found
}

const sourceFiles = (root: string, folder: string, nested: ReadonlyArray<string>): Array<string> => {
  const out: Array<string> = []
  const walk = (relativeDir: string) => {
    for (const entry of readdirSync(join(root, relativeDir))) {
      const path = relativeDir === "" ? entry : `${relativeDir}/${entry}`
      if (SKIPPED.has(entry) || entry.startsWith(".") || nested.includes(path)) continue
      if (statSync(join(root, path)).isDirectory()) walk(path)
      else if (SOURCE.test(entry) && !entry.endsWith(".d.ts")) out.push(path)
    }
  }
  walk(folder)
  return out
}

/** Package folders named by pnpm-workspace.yaml (`- actors/*` style entries). */
const workspaceFolders = (root: string): Array<string> => {
  const yaml = readFileSync(join(root, "pnpm-workspace.yaml"), "utf8")
  const section = yaml.split(/^packages:\s*$/m)[1]?.split(/^\S/m)[0] ?? ""
  const globs = [...section.matchAll(/^\s+-\s+["']?([^"'\s]+)["']?\s*$/gm)].map((m) => m[1]!)
  return globs.flatMap((glob) =>
    glob.endsWith("/*")
      ? readdirSync(join(root, glob.slice(0, -2)))
          .map((entry) => `${glob.slice(0, -2)}/${entry}`)
          .filter((folder) => existsSync(join(root, folder, "package.json")))
      : [glob]
  )
}

export const readWorkspace = (root: string): Array<WorkspacePackage> => {
  const folders = workspaceFolders(root)
  return folders.map((folder) => {
    const manifest = JSON.parse(readFileSync(join(root, folder, "package.json"), "utf8"))
    const exportsField: Record<string, unknown> =
      typeof manifest.exports === "string" || manifest.exports === undefined
        ? { ".": manifest.exports ?? "" }
        : manifest.exports
    const nested = folders.filter((f) => f !== folder && inside(folder, f))
    return {
      name: manifest.name,
      folder,
      dependencies: [
        ...Object.keys(manifest.dependencies ?? {}),
        ...Object.keys(manifest.devDependencies ?? {}),
        ...Object.keys(manifest.peerDependencies ?? {})
      ],
      exports: Object.entries(exportsField)
        .filter(([, target]) => target !== null)
        .map(([subpath]) => subpath),
      files: sourceFiles(root, folder, nested).map((path) => ({
        path: relative(root, join(root, path)).split(sep).join("/"),
        imports: importsOf(readFileSync(join(root, path), "utf8"))
      }))
    }
  })
}
