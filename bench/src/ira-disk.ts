/**
 * Cold storage for the ira suite: evicting the state database from the page cache before every measured
 * pass, checking that it worked, and measuring what a cold 4 KiB read costs on this disk.
 *
 * Eviction is GNU dd's nocache flags (posix_fadvise POSIX_FADV_DONTNEED over the whole file, after an
 * fdatasync so no dirty page stays resident); fincore (util-linux) reads back what is still cached. Pages
 * mapped by a running process cannot be dropped, so each pass runs in a process of its own and the
 * database is evicted between passes, when nobody maps it.
 */
import { spawnSync } from "node:child_process"
import { closeSync, fstatSync, openSync, readSync } from "node:fs"
import { join } from "node:path"
import { Prng } from "@reef/chain"
import { percentile } from "@reef/stats"

export const EVICTION_METHOD = "dd iflag=nocache count=0 (posix_fadvise DONTNEED) after fdatasync; checked with fincore"

export const dataFileOf = (dbPath: string): string => join(dbPath, "data.mdb")

const run = (command: string, args: ReadonlyArray<string>): string => {
  const result = spawnSync(command, args, { encoding: "utf8" })
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed: ${result.stderr || result.error}`)
  return result.stdout
}

/** Bytes of `file` in the page cache. */
export const residentBytes = (file: string): number =>
  Number(run("fincore", ["--bytes", "--noheadings", "--output", "RES", file]).trim())

/** Drops `file` from the page cache; returns the bytes still resident afterwards. */
export const evict = (file: string): number => {
  run("dd", [`of=${file}`, "oflag=nocache", "conv=notrunc,fdatasync", "count=0", "status=none"])
  run("dd", [`if=${file}`, "iflag=nocache", "count=0", "status=none"])
  return residentBytes(file)
}

export interface ColdReadLatency {
  readonly samples: number
  readonly p50Us: number
  readonly p99Us: number
  readonly meanUs: number
}

/** Random aligned 4 KiB reads of an evicted file, one at a time; the file is evicted again afterwards. */
export const probeColdReads = (file: string, samples = 2000): ColdReadLatency => {
  evict(file)
  const fd = openSync(file, "r")
  const latencies: Array<number> = []
  try {
    const pages = Math.floor(fstatSync(fd).size / 4096)
    const buffer = Buffer.alloc(4096)
    const rng = new Prng(4096)
    for (let i = 0; i < samples; i++) {
      const started = process.hrtime.bigint()
      readSync(fd, buffer, 0, 4096, rng.int(pages) * 4096)
      latencies.push(Number(process.hrtime.bigint() - started) / 1000)
    }
  } finally {
    closeSync(fd)
  }
  evict(file)
  return {
    samples,
    p50Us: percentile(latencies, 50),
    p99Us: percentile(latencies, 99),
    meanUs: latencies.reduce((s, x) => s + x, 0) / latencies.length
  }
}

/** `uptime`'s load averages: how busy the shared machine was. */
export const loadAverage = (): string => run("uptime", []).trim()
