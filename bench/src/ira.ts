/**
 * `pnpm bench ira [--quick]`: Ira's hint-based backup replay against the sequential on-demand baseline, on a
 * cold on-disk state store (paper §5). Writes bench/results/ira.json, ira-speedup-cdf.svg and
 * ira-readers.svg.
 *
 * The setup is the paper's: a reth-shaped archive whose head is past a window of blocks, and every pass
 * replays that window as of each block's parent. The store is built here (genesis plus history, several
 * GB in the full run, about 0.4 GB with --quick), then each pass runs in a fresh process on the database
 * evicted from the page cache:
 *
 * - primary: executes the window with the hint recorder (its cost: construction and serialization);
 * - baseline: sequential, on demand, two-step lookups behind reth's cross-block cache;
 * - backup with k = 1, 2, 4, 8, 16 readers and honest hints, and with 16 readers and malicious hints of
 *   the same size.
 *
 * The primary, the baseline, the 16-reader backup and the malicious run are measured in interleaved rounds
 * (harness: 3, 2 with --quick); every ratio is the median and min–max over rounds. A block's time is its
 * execution plus an even share of its batch's wait on both sides (`chargedBlockMs`), so the per-block median
 * compares like with like and the charges add up to the wall time, the headline.
 *
 * Options: --dir D (where to build; default a temp dir, and with --quick a kept one, reef-ira-quick-store),
 * --keep (keep the database and reuse it next
 * time), --window N (blocks replayed), --latency-us N (a remote-disk
 * what-if: the baseline and the 16-reader backup run once more with every store seek delayed N µs; reported
 * under metrics.remoteDiskWhatIf, the headline ratios stay the real disk's).
 */
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import {
  CalibrationCollector,
  type ChainScale,
  calibrationRows,
  chainSpec,
  contractsOf,
  defaultWorkload,
  extendChain,
  openTables,
  readGenesis,
  readHead,
  writeGenesis
} from "@reef/chain"
import { allocatorEnv } from "@reef/devkit"
import { percentile } from "@reef/stats"
import { figureOf, interleave, machineNow, ratioOf, readMachine, writeResult } from "./harness/index.js"
import { dataFileOf, EVICTION_METHOD, evict, probeColdReads } from "./ira-disk.js"
import type { PassResult, PassSpec } from "./ira-pass.js"
import { printTable, round } from "./report.js"

const READER_COUNTS = [1, 2, 4, 8, 16] as const
/** Blocks per prefetch batch (the backup's default), and the slices both sides' waits are shared over. */
const BATCH_BLOCKS = 32
const CHAIN_SEED = 1
const WORKLOAD_SEED = 7
/** History before the window, so the window starts on a chain already in use. */
const HISTORY_BEFORE = 32

const flagValue = (flags: ReadonlyArray<string>, name: string): string | undefined => {
  const i = flags.indexOf(`--${name}`)
  return i >= 0 ? flags[i + 1] : undefined
}

const sum = (xs: ReadonlyArray<number>) => xs.reduce((s, x) => s + x, 0)

/**
 * Per block: its execution plus an even share of the time its batch spent not executing (waiting for the
 * prefetch, or anything else between blocks), batches being the same `batch`-block slices of the window on both
 * sides. `doneMs` is when each block was applied, from the replay's start; the charges add up to the wall time.
 * (Charging the first block of a batch alone with its wait compared cache-warm blocks with a cold baseline.)
 */
export const chargedBlockMs = (
  doneMs: ReadonlyArray<number>,
  execMs: ReadonlyArray<number>,
  batch: number
): Array<number> => {
  const out: Array<number> = []
  let previousEnd = 0
  for (let from = 0; from < execMs.length; from += batch) {
    const to = Math.min(from + batch, execMs.length)
    const span = doneMs[to - 1]! - previousEnd
    const idle = span - sum(execMs.slice(from, to))
    for (let i = from; i < to; i++) out.push(execMs[i]! + idle / (to - from))
    previousEnd = doneMs[to - 1]!
  }
  return out
}

interface Layout {
  readonly scale: ChainScale
  readonly first: number
  readonly last: number
  readonly head: number
}

/** Builds genesis and history (or reuses a kept database of the same layout); returns the calibration. */
const buildStore = (dbPath: string, layout: Layout) => {
  const spec = chainSpec(layout.scale, CHAIN_SEED)
  const workload = defaultWorkload(WORKLOAD_SEED)
  if (existsSync(dataFileOf(dbPath))) {
    const tables = openTables({ path: dbPath, readOnly: true })
    const reusable = readHead(tables) === layout.head && readGenesis(tables)?.toString() === JSON.stringify(spec)
    void tables.env.close()
    if (reusable) return { built: false, genesisSeconds: 0, historySeconds: 0, calibration: undefined }
    rmSync(dbPath, { recursive: true, force: true })
  }
  mkdirSync(dbPath, { recursive: true })
  const tables = openTables({ path: dbPath, durable: false })
  let started = performance.now()
  const genesis = writeGenesis(tables, spec)
  const genesisSeconds = (performance.now() - started) / 1000
  console.log(
    `genesis: ${genesis.storageEntries.toLocaleString("en")} storage entries, ${genesis.historyEntries.toLocaleString("en")} with pre-history, ${genesis.contracts} contracts (${genesisSeconds.toFixed(0)} s)`
  )
  const collector = new CalibrationCollector(layout.first)
  started = performance.now()
  extendChain(
    tables,
    spec,
    workload,
    layout.head,
    {
      optionsFor: (b) =>
        b >= layout.first && b <= layout.last
          ? { recorder: collector.recorderFor(b), observer: collector.observer }
          : {},
      onBlock: (outcome) => collector.finish(outcome.number, outcome)
    },
    contractsOf(spec)
  )
  const historySeconds = (performance.now() - started) / 1000
  void tables.env.close()
  return { built: true, genesisSeconds, historySeconds, calibration: collector.figures(), genesis }
}

const passScript = join(dirname(fileURLToPath(import.meta.url)), "ira-pass.js")

/** Evicts the database, checks it is out of the page cache, and runs one pass in its own process. */
const runPass = async (
  dbPath: string,
  spec: Omit<PassSpec, "out">,
  label: string
): Promise<PassResult & { residentBeforeBytes: number }> => {
  const residentBeforeBytes = evict(dataFileOf(dbPath))
  const out = join(dirname(dbPath), `pass-${label}.json`)
  const started = performance.now()
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [passScript, JSON.stringify({ ...spec, out })], {
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, ...allocatorEnv() }
    })
    child.once("error", reject)
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`pass ${label} exited with ${code}`))))
  })
  const result = JSON.parse(readFileSync(out, "utf8")) as PassResult
  rmSync(out, { force: true })
  console.log(
    `  ${label}: ${(result.wallMs / 1000).toFixed(1)} s measured, ${((performance.now() - started) / 1000).toFixed(1)} s with start-up; ` +
      `resident before ${(residentBeforeBytes / 2 ** 20).toFixed(1)} MiB; peak RSS ${result.maxRssMb.toFixed(0)} MB`
  )
  return { ...result, residentBeforeBytes }
}

export const run = async (quick: boolean, flags: ReadonlyArray<string>): Promise<void> => {
  const started = readMachine()
  const window = Number(flagValue(flags, "window") ?? (quick ? 64 : 640))
  const layout: Layout = {
    scale: quick ? "quick" : "full",
    first: HISTORY_BEFORE + 1,
    last: HISTORY_BEFORE + window,
    head: HISTORY_BEFORE + window + (quick ? 32 : 64)
  }
  // --quick keeps its store between runs (in the temp dir, rebuilt when its layout changes): building it is
  // minutes of setup, not part of any measurement.
  const quickStore = quick && flagValue(flags, "dir") === undefined
  const dir =
    flagValue(flags, "dir") ??
    (quickStore ? join(tmpdir(), "reef-ira-quick-store") : mkdtempSync(join(tmpdir(), "reef-ira-bench-")))
  const keep = flags.includes("--keep") || quickStore
  const latencyUs = Number(flagValue(flags, "latency-us") ?? 0)
  if (!Number.isFinite(latencyUs) || latencyUs < 0) throw new Error("--latency-us must be a non-negative number")
  const dbPath = join(dir, `state-${layout.scale}`)
  console.log(
    `ira: ${layout.scale} store at ${dbPath}; window blocks ${layout.first}..${layout.last}, head ${layout.head}`
  )
  try {
    const build = buildStore(dbPath, layout)
    const dbBytes = statSync(dataFileOf(dbPath)).size
    console.log(
      `database: ${(dbBytes / 2 ** 30).toFixed(2)} GiB${build.built ? `, history ${build.historySeconds.toFixed(0)} s` : " (reused)"}`
    )
    const cold = probeColdReads(dataFileOf(dbPath))
    console.log(`cold 4 KiB reads on this disk: p50 ${cold.p50Us.toFixed(0)} us, p99 ${cold.p99Us.toFixed(0)} us`)

    const base = {
      db: dbPath,
      scale: layout.scale,
      chainSeed: CHAIN_SEED,
      workloadSeed: WORKLOAD_SEED,
      first: layout.first,
      last: layout.last,
      head: layout.head,
      primaryFile: join(dir, "primary.bin")
    } as const
    // Interleaved rounds: primary (it writes the hints the others read), baseline, honest k = 16, malicious
    // k = 16, each pass in a fresh process on the evicted store.
    type Run = PassResult & { residentBeforeBytes: number }
    const rounds = await interleave(
      { quick, label: "ira" },
      {
        primary: (r) => runPass(dbPath, { ...base, kind: "primary" }, `primary-${r + 1}`),
        baseline: (r) => runPass(dbPath, { ...base, kind: "baseline" }, `baseline-${r + 1}`),
        k16: (r) => runPass(dbPath, { ...base, kind: "backup", readers: 16, hints: "honest" }, `backup-k16-${r + 1}`),
        malicious: (r) =>
          runPass(dbPath, { ...base, kind: "backup", readers: 16, hints: "malicious" }, `malicious-k16-${r + 1}`)
      }
    )
    // The reader-count curve: one run per k besides 16 (whose point is the rounds' median).
    const otherK = READER_COUNTS.filter((k) => k !== 16 && (!quick || k === 1 || k === 4))
    const backups = new Map<number, Run>()
    for (const k of otherK) {
      backups.set(k, await runPass(dbPath, { ...base, kind: "backup", readers: k, hints: "honest" }, `backup-k${k}`))
    }
    // The what-if: the same two configurations on an emulated remote disk (never in the headline ratios).
    const remote =
      latencyUs > 0
        ? {
            baseline: await runPass(dbPath, { ...base, kind: "baseline", latencyUs }, "remote-baseline"),
            k16: await runPass(
              dbPath,
              { ...base, kind: "backup", readers: 16, hints: "honest", latencyUs },
              "remote-k16"
            )
          }
        : undefined

    // ---- per-block figures: every block charged its share of its batch's wait, on both sides ---------------
    const charged = (r: Run) => chargedBlockMs(r.doneMs, r.execMs, BATCH_BLOCKS)
    const figuresOf = (v: (typeof rounds)[number]["values"]) => {
      const baseMs = charged(v.baseline)
      const k16Ms = charged(v.k16)
      const malMs = charged(v.malicious)
      const speedup = baseMs.map((b, i) => b / k16Ms[i]!)
      const slowdown = malMs.map((m, i) => m / baseMs[i]!)
      const p = v.primary.primary!
      return {
        baseMs,
        k16Ms,
        speedup,
        slowdown,
        medianSpeedup: percentile(speedup, 50),
        medianSlowdown: percentile(slowdown, 50),
        hintPct: (100 * (sum(p.constructMs) + sum(p.serializeMs))) / sum(v.primary.execMs)
      }
    }
    const perRound = rounds.map((r) => figuresOf(r.values))
    const passes = rounds.flatMap((r) => [r.values.primary, r.values.baseline, r.values.k16, r.values.malicious])
    const all = [...passes, ...backups.values(), ...(remote ? [remote.baseline, remote.k16] : [])]
    const mismatchBlocks = all.filter((r) => r.divergedAt !== undefined).length
    const last = rounds[rounds.length - 1]!.values
    const p = last.primary.primary!
    const hintSources = p.sources
    const sourceTotal = sum(Object.values(hintSources))
    const conditions = {
      window: `${window} blocks (${layout.first}..${layout.last}), head ${layout.head}, historical replay`,
      store: `${(dbBytes / 2 ** 30).toFixed(2)} GiB LMDB, evicted from the page cache before every pass (${EVICTION_METHOD})`,
      process: "every pass in a fresh process",
      clock: "wall: replay start to last block applied, the same clock on both sides",
      batches: `${BATCH_BLOCKS}-block batches; every block charged its execution plus an even share of its batch's time not spent executing, on both sides`
    }
    const ratios = {
      wallSpeedupK16: ratioOf(
        {
          numerator: "baseline replay wall time (s)",
          denominator: "hinted backup replay wall time, k = 16 readers (s)",
          conditions
        },
        rounds,
        (v) => v.baseline.wallMs,
        (v) => v.k16.wallMs
      ),
      medianBlockSpeedupK16: ratioOf(
        {
          numerator: "per round: median over blocks of (baseline block time / backup block time), k = 16",
          denominator: "1 (the per-block ratio is taken inside each round)",
          conditions
        },
        rounds,
        (v) => figuresOf(v).medianSpeedup,
        () => 1
      ),
      maliciousWallSlowdownK16: ratioOf(
        {
          numerator: "backup with malicious hints of the same size, k = 16, wall time (s)",
          denominator: "baseline replay wall time (s)",
          conditions
        },
        rounds,
        (v) => v.malicious.wallMs,
        (v) => v.baseline.wallMs
      ),
      maliciousMedianBlockSlowdownK16: ratioOf(
        {
          numerator: "per round: median over blocks of (malicious-hint block time / baseline block time)",
          denominator: "1 (the per-block ratio is taken inside each round)",
          conditions
        },
        rounds,
        (v) => figuresOf(v).medianSlowdown,
        () => 1
      ),
      primaryHintOverheadPct: ratioOf(
        {
          numerator: "primary: hint construction + serialization time (ms, x100 for %)",
          denominator: "primary: block execution time with the recorder (ms)",
          conditions: { window: conditions.window, process: conditions.process }
        },
        rounds,
        (v) => 100 * (sum(v.primary.primary!.constructMs) + sum(v.primary.primary!.serializeMs)),
        (v) => sum(v.primary.execMs)
      )
    }
    const pooledSpeedup = perRound.flatMap((r) => r.speedup)
    const pooledSlowdown = perRound.flatMap((r) => r.slowdown)
    const wallOf = (f: (v: (typeof rounds)[number]["values"]) => Run) => figureOf(rounds, (v) => f(v).wallMs / 1000)
    const baselineWall = wallOf((v) => v.baseline)
    const k16Wall = wallOf((v) => v.k16)
    const speedupOfK = (k: number) =>
      k === 16 ? ratios.wallSpeedupK16.median : baselineWall.median / (backups.get(k)!.wallMs / 1000)

    printTable(
      `ira: per-block replay, ${window} blocks, cold store (${(dbBytes / 2 ** 30).toFixed(2)} GiB), ${rounds.length} rounds pooled`,
      ["figure", "p5", "median", "p95", "mean"],
      [
        ["baseline block ms (charged)", ...stats(perRound.flatMap((r) => r.baseMs))],
        ["backup k16 block ms (charged)", ...stats(perRound.flatMap((r) => r.k16Ms))],
        ["per-block speedup (k16)", ...stats(pooledSpeedup)],
        ["malicious slowdown (k16)", ...stats(pooledSlowdown)],
        ["primary exec ms", ...stats(last.primary.execMs)],
        ["hint raw KB", ...stats(p.rawHintBytes.map((b) => b / 1000))],
        ["hint compressed KB", ...stats(p.hintBytes.map((b) => b / 1000))],
        ["hint keys", ...stats(p.hintKeys)]
      ]
    )
    printTable(
      "ira: wall time by readers (same cold start each)",
      ["configuration", "wall s", "speedup", "hits", "misses", "peak RSS MB"],
      [
        ["baseline (median)", baselineWall.median, 1, "-", "-", last.baseline.maxRssMb],
        ...otherK.map((k) => {
          const r = backups.get(k)!
          return [`backup k=${k}`, r.wallMs / 1000, speedupOfK(k), r.hits, r.misses, r.maxRssMb]
        }),
        [
          "backup k=16 (median)",
          k16Wall.median,
          ratios.wallSpeedupK16.median,
          last.k16.hits,
          last.k16.misses,
          last.k16.maxRssMb
        ]
      ]
    )
    if (build.calibration !== undefined) {
      printTable(
        "ira: workload calibration (executed window) against the paper's Ethereum figures",
        ["figure", "generated", "paper"],
        calibrationRows(build.calibration).map(([name, ours, paper]) => [name, round(ours, 3), paper])
      )
    }
    printTable(
      "ira: ratios (median and min–max over rounds)",
      ["ratio", "median", "min", "max"],
      Object.entries(ratios).map(([n, r]) => [n, r.median, r.min, r.max])
    )
    console.log(`cold reads: p50 ${cold.p50Us.toFixed(0)} us, p99 ${cold.p99Us.toFixed(0)} us; ${EVICTION_METHOD}`)
    if (remote !== undefined) {
      console.log(
        `what-if, every store seek +${latencyUs} us (emulated remote disk): baseline ${(remote.baseline.wallMs / 1000).toFixed(1)} s, ` +
          `backup k=16 ${(remote.k16.wallMs / 1000).toFixed(1)} s, speedup ${(remote.baseline.wallMs / remote.k16.wallMs).toFixed(2)}x`
      )
    }

    const metrics = {
      blocks: window,
      batchBlocks: BATCH_BLOCKS,
      databaseGiB: round(dbBytes / 2 ** 30, 2),
      eviction: EVICTION_METHOD,
      residentAfterEvictionMiB: round(Math.max(...all.map((r) => r.residentBeforeBytes)) / 2 ** 20, 2),
      coldRead4KiB: { p50Us: round(cold.p50Us, 1), p99Us: round(cold.p99Us, 1), meanUs: round(cold.meanUs, 1) },
      stateHashMismatches: mismatchBlocks,
      // The former measure, on this run's data, to show what it hid: only the first block of each batch charged
      // its prefetch wait, and the baseline's blocks without the time between them.
      formerMedianBlockSpeedupK16: figureOf(rounds, (v) =>
        percentile(
          v.baseline.execMs.map((b, i) => b / (v.k16.waitMs[i]! + v.k16.execMs[i]!)),
          50
        )
      ),
      perBlockSpeedupPooled: {
        note: "every block of every round, each charged its share of its batch's wait on both sides",
        p5: round(percentile(pooledSpeedup, 5)),
        median: round(percentile(pooledSpeedup, 50)),
        p95: round(percentile(pooledSpeedup, 95)),
        shareSlowerThanBaseline: round(pooledSpeedup.filter((x) => x < 1).length / pooledSpeedup.length, 4)
      },
      wallSeconds: {
        baseline: baselineWall,
        k16: k16Wall,
        maliciousK16: wallOf((v) => v.malicious),
        ...Object.fromEntries(otherK.map((k) => [`k${k}`, round(backups.get(k)!.wallMs / 1000)]))
      },
      primary: {
        execMsTotal: round(sum(last.primary.execMs)),
        constructMsTotal: round(sum(p.constructMs)),
        serializeMsTotal: round(sum(p.serializeMs))
      },
      hintBytes: {
        rawMedianKB: round(percentile(p.rawHintBytes, 50) / 1000),
        compressedMedianKB: round(percentile(p.hintBytes, 50) / 1000),
        compressedP95KB: round(percentile(p.hintBytes, 95) / 1000),
        compressionRatio: round(sum(p.rawHintBytes) / sum(p.hintBytes)),
        keysMedian: percentile(p.hintKeys, 50)
      },
      hintSourceShare: Object.fromEntries(Object.entries(hintSources).map(([s, n]) => [s, round(n / sourceTotal, 3)])),
      peakRssMb: {
        baseline: round(last.baseline.maxRssMb),
        backupK16: round(last.k16.maxRssMb),
        baselineAnon: round(last.baseline.peakAnonMb),
        backupK16Anon: round(last.k16.peakAnonMb)
      },
      hintsRejected: sum(all.map((r) => r.hintsRejected)),
      ...(remote === undefined
        ? {}
        : {
            remoteDiskWhatIf: {
              note: "one run each, emulated latency: not a headline",
              latencyUsPerSeek: latencyUs,
              baselineWallSeconds: round(remote.baseline.wallMs / 1000),
              k16WallSeconds: round(remote.k16.wallMs / 1000),
              wallSpeedupK16: round(remote.baseline.wallMs / remote.k16.wallMs, 2)
            }
          }),
      ...(build.calibration === undefined
        ? {}
        : {
            calibration: Object.fromEntries(
              calibrationRows(build.calibration).map(([n, o, pp]) => [n, { generated: round(o, 3), paper: pp }])
            )
          })
    }
    const cdf = (samples: ReadonlyArray<number>, series: string) =>
      [...samples]
        .sort((a, b) => a - b)
        .map((x, i, xs) => ({ series, x: round(x, 3), y: round((i + 1) / xs.length, 4) }))
    const path = await writeResult({
      suite: "ira",
      quick,
      command: `pnpm bench ira${quick ? " --quick" : ""}`,
      machine: machineNow(started),
      ratios,
      metrics,
      curves: {
        "speedup-cdf": {
          title: `Ira: per-block speedup and malicious-hint slowdown vs the baseline (${window} blocks, cold store)`,
          x: { title: "baseline block time / backup block time (×), each charged its batch's wait", scale: "log" },
          y: { title: "share of blocks" },
          interpolate: "step-after",
          pointMarks: false,
          points: perRound.flatMap((r, i) => [
            ...cdf(r.speedup, `speedup, honest hints, round ${i + 1}`),
            ...cdf(r.slowdown, `slowdown, malicious hints, round ${i + 1}`)
          ])
        },
        readers: {
          title: "Ira: replay wall-time speedup over the baseline by reader threads",
          x: { title: "reader threads (k)", scale: "log", ticks: [...otherK, 16] },
          y: { title: "baseline wall / backup wall (×)" },
          headline: "k = 16: median and min–max over rounds; other k: one run against the baseline's median",
          points: [
            ...otherK.map((k) => ({ series: "hinted backup", x: k, y: round(speedupOfK(k), 3) })),
            {
              series: "hinted backup",
              x: 16,
              y: ratios.wallSpeedupK16.median,
              yMin: ratios.wallSpeedupK16.min,
              yMax: ratios.wallSpeedupK16.max
            }
          ]
        }
      }
    })
    console.log(`wrote ${path}`)
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true })
    else rmSync(join(dir, "primary.bin"), { force: true })
  }
}

const stats = (xs: ReadonlyArray<number>) => [
  percentile(xs, 5),
  percentile(xs, 50),
  percentile(xs, 95),
  xs.length === 0 ? 0 : sum(xs) / xs.length
]
