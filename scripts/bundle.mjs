/**
 * Bundles the built JavaScript (run after `tsc -b`, part of `pnpm build`) into a few files per entry point:
 * the `reef` CLI (services/cli/dist/main.js) and the NIC engine thread (actors/nic/dist/engine-worker.js),
 * written to services/cli/dist/bundle/. Loading thousands of module files costs an actor process or a
 * `reef status` most of its start-up (resolution, file reads, one compile each); a bundle is read in a few
 * files. Code splitting keeps each command's lazy imports lazy: `reef status` does not load a replica.
 *
 * Bundled code behaves as the unbundled dist: every `import.meta.url`, `__dirname` and `__filename` of a
 * bundled module still names the module's own file (proto files, package.json files and workers are found
 * next to it), except a `new URL("./x.js", import.meta.url)` naming another entry point (the engine worker),
 * which names that entry's bundle. Native and file-reading packages stay external, loaded from node_modules.
 */
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const { BUNDLE_ENTRY, freshBuild } = await import(join(root, "libs", "devkit", "dist", "fresh-dist.js"))
const outdir = join(root, dirname(BUNDLE_ENTRY))
/** Written next to it, then renamed: a process starting meanwhile sees the old bundle or the new one. */
const tmpdir = `${outdir}.tmp`

/** Entry points: output name -> the dist module it bundles. */
const entries = {
  reef: join(root, "services", "cli", "dist", "main.js"),
  // `reef status` without Effect and grpc-js (services/cli/src/fast-status.ts), loaded by bin/reef.mjs.
  "reef-status": join(root, "services", "cli", "dist", "fast-status.js"),
  "engine-worker": join(root, "actors", "nic", "dist", "engine-worker.js")
}

/**
 * Packages loaded from node_modules, not bundled: native addons (and what loads them), and packages that read
 * their own files at run time or build code with eval (protobufjs and the gRPC reflection built on it).
 */
const EXTERNAL = [
  "lmdb",
  "zstd-napi",
  "msgpackr",
  "msgpackr-extract",
  "protobufjs",
  "@grpc/proto-loader",
  "@grpc/reflection",
  "grpc-health-check"
]
const isExternal = (path) => EXTERNAL.some((name) => path === name || path.startsWith(`${name}/`))

/** A path from the bundle directory, as a string literal for the bundled code. */
const fromOutdir = (path) => JSON.stringify(relative(outdir, path).split("\\").join("/"))

// Defined once per output file: `import.meta.url` there is the bundle file's own URL.
const banner = [
  'import { createRequire as __reefCreateRequire } from "node:module";',
  'import { fileURLToPath as __reefFileURLToPath } from "node:url";',
  "const require = __reefCreateRequire(import.meta.url);",
  "const __reefBundleUrl = import.meta.url;",
  "const __reefUrl = (path) => new URL(path, import.meta.url).href;",
  "const __reefPath = (path) => __reefFileURLToPath(new URL(path, import.meta.url));",
  // The namespace Node gives an import() of CommonJS: its exports, and module.exports as the default.
  "const __reefCommonJs = ({ default: exports }) => ({ ...exports, default: exports });"
].join("\n")

const entryBundle = new Map(Object.entries(entries).map(([name, path]) => [path, `./${name}.mjs`]))

/** `import("literal")`, the only dynamic imports the bundled code has. */
const DYNAMIC_IMPORT = /\bimport\((["'])([^"']+)\1\)/g

/** Whether a file is CommonJS: a .cjs file, or a .js file whose package is not `"type": "module"`. */
const packageTypes = new Map()
const isCommonJs = (path) => {
  if (path.endsWith(".cjs")) return true
  if (!path.endsWith(".js")) return false
  for (let dir = dirname(path); dir !== dirname(dir); dir = dirname(dir)) {
    if (!packageTypes.has(dir)) {
      const manifest = join(dir, "package.json")
      packageTypes.set(
        dir,
        existsSync(manifest) ? (JSON.parse(readFileSync(manifest, "utf8")).type ?? "commonjs") : null
      )
    }
    const type = packageTypes.get(dir)
    if (type !== null) return type !== "module"
  }
  return true
}

/**
 * Rewrites a module's own-location references so they keep naming its original file (see the header), and
 * imports external modules by their path from the bundle.
 */
const ownLocation = {
  name: "own-location",
  setup(b) {
    // Resolved as the importer would (pnpm's layout: only a package's own dependencies are visible).
    const importer = (path) => ({ importer: path, resolveDir: dirname(path) })
    const resolveAsImporter = (args) =>
      b.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: "own-location"
      })
    b.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.pluginData === "own-location" || !isExternal(args.path)) return undefined
      const resolved = await resolveAsImporter(args)
      if (resolved.errors.length > 0) return { errors: resolved.errors }
      return { path: JSON.parse(fromOutdir(resolved.path)), external: true }
    })
    b.onLoad({ filter: /\.(c|m)?js$/ }, async (args) => {
      const source = readFileSync(args.path, "utf8")
      const usesMeta = source.includes("import.meta.url")
      // A module that defines its own (ES modules do) keeps it.
      const usesDirname =
        /\b__(dirname|filename)\b/.test(source) && !/\b(const|let|var)\s+__(dirname|filename)\b/.test(source)
      const dynamicImports = [...source.matchAll(DYNAMIC_IMPORT)]
      if (!usesMeta && !usesDirname && dynamicImports.length === 0) return undefined
      let contents = source
      // import("x") of CommonJS: esbuild's split-off chunk of x exports only a `default` (module.exports);
      // Node's loader also gives the named exports, which the importer expects.
      const commonJs = new Set()
      for (const [, , specifier] of dynamicImports) {
        const resolved = await resolveAsImporter({ path: specifier, kind: "dynamic-import", ...importer(args.path) })
        if (resolved.errors.length === 0 && !resolved.external && isCommonJs(resolved.path)) commonJs.add(specifier)
      }
      if (commonJs.size > 0) {
        contents = contents.replace(DYNAMIC_IMPORT, (match, _quote, specifier) =>
          commonJs.has(specifier) ? `${match}.then(__reefCommonJs)` : match
        )
      }
      if (usesMeta) {
        contents = contents.replace(
          /new URL\((["'])(\.{1,2}\/[^"']+)\1,\s*import\.meta\.url\)/g,
          (match, _quote, target) => {
            const bundle = entryBundle.get(resolve(dirname(args.path), target))
            return bundle === undefined ? match : `new URL(${JSON.stringify(bundle)}, __reefBundleUrl)`
          }
        )
        contents = contents.replaceAll("import.meta.url", `__reefUrl(${fromOutdir(args.path)})`)
      }
      if (usesDirname) {
        contents =
          `var __dirname = __reefPath(${fromOutdir(dirname(args.path))}), ` +
          `__filename = __reefPath(${fromOutdir(args.path)});\n${contents}`
      }
      return { contents, loader: "js", resolveDir: dirname(args.path) }
    })
  }
}

const bundle = async () => {
  rmSync(tmpdir, { recursive: true, force: true })
  const result = await build({
    entryPoints: entries,
    outdir: tmpdir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    banner: { js: banner },
    plugins: [ownLocation],
    sourcemap: "linked",
    metafile: true,
    logLevel: "warning"
  })
  // What each output holds, for looking into the bundle's size (e.g. esbuild's analyzer).
  writeFileSync(join(tmpdir, "meta.json"), JSON.stringify(result.metafile))
  rmSync(outdir, { recursive: true, force: true })
  renameSync(tmpdir, outdir)
}

// Up to date (as new as every package's build, see fresh-dist.ts): nothing to do, unless --force.
if (process.argv.includes("--force") || freshBuild(root) !== "bundle") await bundle()
