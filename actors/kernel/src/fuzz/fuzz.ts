/**
 * Property-based fuzzing of a decoder: hostile bytes (inputs.ts) in, and for every case a typed refusal or a
 * valid value out. A crash (anything thrown that is not the decoder's typed error), an accepted value that its
 * check rejects, or memory out of proportion to the input (a decoded value, or buffers allocated while
 * decoding (V8's external memory), beyond a fixed multiple of the input's size) fails the property, and fast-check shrinks it to a
 * small input and prints the seed that replays it. A hang shows as the test's timeout.
 *
 * Cases per decoder: REEF_FUZZ_RUNS (CI's default, 10,000), REEF_FUZZ_SEED to replay a run. With
 * REEF_FUZZ_REPORT=<file>, each decoder's counts are appended to it as a JSON line.
 */
import { appendFileSync } from "node:fs"
import { getHeapStatistics } from "node:v8"
import fc from "fast-check"
import { hostileBytes } from "./inputs.js"

export const DEFAULT_FUZZ_RUNS = 10_000

/** How many cases each decoder gets: REEF_FUZZ_RUNS, else 10,000. */
export const fuzzRuns = (): number => {
  const fromEnv = Number(process.env.REEF_FUZZ_RUNS)
  return Number.isSafeInteger(fromEnv) && fromEnv > 0 ? fromEnv : DEFAULT_FUZZ_RUNS
}

export interface FuzzTarget<A> {
  /** What the report calls the decoder. */
  readonly name: string
  readonly decode: (bytes: Uint8Array) => A
  /** Whether a thrown or returned outcome is the decoder's typed refusal (an `Either.left`, an `Invalid`...). */
  readonly refused: (outcome: unknown) => boolean
  /** What is wrong with an accepted value, or undefined when it is valid (e.g. it re-encodes to itself). */
  readonly check?: (value: A, bytes: Uint8Array) => string | undefined
  /** Valid encodings to mutate: most cases start from one of them. */
  readonly seeds: ReadonlyArray<Uint8Array>
  /** Add protobuf-shaped inputs (for protobuf decoders). */
  readonly protobuf?: boolean
  /** Longest random input (default 512 bytes); mutated seeds grow from the seeds' own sizes. */
  readonly maxRandomLength?: number
  /** Memory a case may use per input byte, for the decoded value and for buffers allocated (default 256). */
  readonly bytesPerInputByte?: number
}

export interface FuzzReport {
  readonly name: string
  readonly cases: number
  readonly accepted: number
  readonly refused: number
  /** Largest input tried, in bytes. */
  readonly maxInputBytes: number
}

/** Memory any case may use whatever its input: room for fixed-size tables and a decoder's own buffers. */
const FIXED_ALLOWANCE_BYTES = 256 * 1024

/** A rough size of what a decoded value keeps alive: the bytes of its buffers and strings, a word per slot. */
export const approximateSize = (value: unknown, seen: Set<object> = new Set()): number => {
  if (value === null || value === undefined) return 8
  switch (typeof value) {
    case "string":
      return 16 + value.length * 2
    case "number":
    case "boolean":
    case "bigint":
      return 8
    case "object": {
      if (seen.has(value)) return 8
      seen.add(value)
      if (ArrayBuffer.isView(value)) return 64 + value.byteLength
      if (value instanceof ArrayBuffer) return 64 + value.byteLength
      let size = 32
      if (value instanceof Map) {
        for (const [k, v] of value) size += 16 + approximateSize(k, seen) + approximateSize(v, seen)
        return size
      }
      if (value instanceof Set) {
        for (const v of value) size += 16 + approximateSize(v, seen)
        return size
      }
      for (const key of Object.keys(value)) size += 8 + approximateSize((value as Record<string, unknown>)[key], seen)
      return size
    }
    default:
      return 8
  }
}

const describe = (outcome: unknown): string =>
  outcome instanceof Error ? `${outcome.name}: ${outcome.message}` : String(outcome)

const externalBytes = (): number => getHeapStatistics().external_memory

/** One case through one target: "accepted" or "refused", else throws what went wrong. */
const runCase = <A>(target: FuzzTarget<A>, bytes: Uint8Array): "accepted" | "refused" => {
  const budget = FIXED_ALLOWANCE_BYTES + (target.bytesPerInputByte ?? 256) * bytes.length
  const externalBefore = externalBytes()
  let value: A
  try {
    value = target.decode(bytes)
  } catch (thrown) {
    if (target.refused(thrown)) return "refused"
    throw new Error(`${target.name} crashed on ${bytes.length} bytes: ${describe(thrown)}`, { cause: thrown })
  }
  const allocated = externalBytes() - externalBefore
  if (allocated > budget) {
    throw new Error(`${target.name} allocated ${allocated} bytes of buffers for ${bytes.length} input bytes`)
  }
  if (target.refused(value)) return "refused"
  const size = approximateSize(value)
  if (size > budget) throw new Error(`${target.name} decoded ${bytes.length} bytes into ~${size} bytes`)
  const problem = target.check?.(value, bytes)
  if (problem !== undefined) throw new Error(`${target.name} accepted an invalid value: ${problem}`)
  return "accepted"
}

/**
 * Runs `runs` hostile cases through each of `targets` (every input goes to every target, so decoders of one
 * family, such as every protobuf message, share the cost of drawing inputs); throws, failing the test, at the
 * first crash, invalid value or excess allocation, with the shrunk input and a replayable seed. Returns each
 * target's counts for the report.
 */
export const fuzzDecoders = (
  targets: ReadonlyArray<FuzzTarget<any>>,
  runs: number = fuzzRuns()
): ReadonlyArray<FuzzReport> => {
  const arbitrary = hostileBytes(
    targets.flatMap((t) => t.seeds),
    {
      protobuf: targets.some((t) => t.protobuf === true),
      maxRandomLength: Math.max(...targets.map((t) => t.maxRandomLength ?? 512))
    }
  )
  const counts = targets.map(() => ({ accepted: 0, refused: 0 }))
  let cases = 0
  let maxInputBytes = 0
  const seedFromEnv = Number(process.env.REEF_FUZZ_SEED)
  // Most cases are refused with an error whose stack trace would cost more than the decoding: none is taken
  // (a failure names the decoder and the input; its seed replays it).
  const stackTraceLimit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    fc.assert(
      fc.property(arbitrary, (bytes) => {
        cases++
        if (bytes.length > maxInputBytes) maxInputBytes = bytes.length
        for (let i = 0; i < targets.length; i++) counts[i]![runCase(targets[i]!, bytes)]++
      }),
      { numRuns: runs, ...(Number.isSafeInteger(seedFromEnv) && { seed: seedFromEnv }) }
    )
  } finally {
    Error.stackTraceLimit = stackTraceLimit
  }
  const reports = targets.map((t, i) => ({ name: t.name, cases, ...counts[i]!, maxInputBytes }))
  const file = process.env.REEF_FUZZ_REPORT
  if (file !== undefined && file !== "") {
    appendFileSync(file, reports.map((r) => `${JSON.stringify(r)}\n`).join(""))
  }
  return reports
}

/** `fuzzDecoders` for one decoder. */
export const fuzzDecoder = <A>(target: FuzzTarget<A>, runs: number = fuzzRuns()): FuzzReport =>
  fuzzDecoders([target], runs)[0]!
