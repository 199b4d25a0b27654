/**
 * The simulator's only source of randomness: splitmix32, seeded, so a run is a pure function of its seed
 * (TigerBeetle's `PRNG.from_seed`). Never Math.random.
 */
export class Prng {
  private state: number

  constructor(seed: number) {
    this.state = seed >>> 0
  }

  /** Uniform in [0, 2^32). */
  nextU32(): number {
    this.state = (this.state + 0x9e3779b9) >>> 0
    let z = this.state
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b)
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35)
    return (z ^ (z >>> 16)) >>> 0
  }

  /** Uniform in [0, 1). */
  float(): number {
    return this.nextU32() / 0x1_0000_0000
  }

  /** Uniform integer in [lo, hi], both inclusive. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.float() * (hi - lo + 1))
  }

  /** Uniform real in [lo, hi). */
  between(lo: number, hi: number): number {
    return lo + this.float() * (hi - lo)
  }

  chance(p: number): boolean {
    return this.float() < p
  }

  pick<T>(items: ReadonlyArray<T>): T {
    if (items.length === 0) throw new Error("prng: pick from an empty list")
    return items[this.int(0, items.length - 1)]!
  }

  /** `k` distinct items in random order. */
  sample<T>(items: ReadonlyArray<T>, k: number): Array<T> {
    const copy = [...items]
    for (let i = copy.length - 1; i > 0; i--) {
      const j = this.int(0, i)
      ;[copy[i], copy[j]] = [copy[j]!, copy[i]!]
    }
    return copy.slice(0, k)
  }

  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n)
    for (let i = 0; i < n; i++) out[i] = this.nextU32() & 0xff
    return out
  }

  /** An independent stream, so adding draws in one part of a run does not shift another part. */
  fork(): Prng {
    return new Prng(this.nextU32())
  }
}
