/**
 * The cores' only source of randomness (SFS and Zeus tie-breaks, the random policy): mulberry32 from an
 * injected seed, so a run is a pure function of its inputs. Never Math.random.
 */
export class Prng {
  private state: number

  constructor(seed: number) {
    this.state = seed >>> 0
  }

  /** Uniform in [0, 2^32). */
  nextU32(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0
    let t = this.state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return (t ^ (t >>> 14)) >>> 0
  }

  /** Uniform in [0, 1). */
  float(): number {
    return this.nextU32() / 0x1_0000_0000
  }

  /** Uniform integer in [0, n). */
  below(n: number): number {
    return Math.floor(this.float() * n)
  }

  /** Uniform integer in [lo, hi], both inclusive. */
  int(lo: number, hi: number): number {
    return lo + this.below(hi - lo + 1)
  }

  chance(p: number): boolean {
    return this.float() < p
  }

  pick<T>(items: ReadonlyArray<T>): T {
    if (items.length === 0) throw new Error("prng: pick from an empty list")
    return items[this.below(items.length)]!
  }

  /** An independent stream, so draws in one part of a run do not shift another part. */
  fork(): Prng {
    return new Prng(this.nextU32())
  }
}
