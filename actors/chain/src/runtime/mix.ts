/**
 * Deterministic integer mixing for the chain: slot and address derivation, the genesis permutation and the
 * workload's PRNG. Everything is 32-bit integer arithmetic (Math.imul), so primary and backup derive the same
 * bytes on any machine, and it is fast enough to run on every storage access.
 */

/** murmur3's finaliser: a bijective avalanche of a 32-bit integer. */
export const fmix32 = (h: number): number => {
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

/** Mixes up to four 32-bit integers into one 32-bit hash (order matters). */
export const mix32 = (a: number, b: number, c = 0, d = 0): number => {
  let h = fmix32((a ^ 0x9e3779b9) >>> 0)
  h = fmix32((h ^ Math.imul(b | 0, 0xcc9e2d51)) >>> 0)
  h = fmix32((h ^ Math.imul(c | 0, 0x1b873593)) >>> 0)
  return fmix32((h ^ Math.imul(d | 0, 0xe6546b64)) >>> 0)
}

const BYTE = 0xff

/** 32 bytes from eight 32-bit words, as a latin1 string (a slot). */
export const wordsToSlot = (w: Uint32Array): string =>
  String.fromCharCode(
    w[0]! >>> 24,
    (w[0]! >>> 16) & BYTE,
    (w[0]! >>> 8) & BYTE,
    w[0]! & BYTE,
    w[1]! >>> 24,
    (w[1]! >>> 16) & BYTE,
    (w[1]! >>> 8) & BYTE,
    w[1]! & BYTE,
    w[2]! >>> 24,
    (w[2]! >>> 16) & BYTE,
    (w[2]! >>> 8) & BYTE,
    w[2]! & BYTE,
    w[3]! >>> 24,
    (w[3]! >>> 16) & BYTE,
    (w[3]! >>> 8) & BYTE,
    w[3]! & BYTE,
    w[4]! >>> 24,
    (w[4]! >>> 16) & BYTE,
    (w[4]! >>> 8) & BYTE,
    w[4]! & BYTE,
    w[5]! >>> 24,
    (w[5]! >>> 16) & BYTE,
    (w[5]! >>> 8) & BYTE,
    w[5]! & BYTE,
    w[6]! >>> 24,
    (w[6]! >>> 16) & BYTE,
    (w[6]! >>> 8) & BYTE,
    w[6]! & BYTE,
    w[7]! >>> 24,
    (w[7]! >>> 16) & BYTE,
    (w[7]! >>> 8) & BYTE,
    w[7]! & BYTE
  )

/**
 * A keyed pseudo-random permutation of [0, size) (a 4-round Feistel network with cycle walking): it spreads
 * a contract's logically consecutive entries over its slot space, as Solidity's hashed mappings do, while
 * the genesis can still be enumerated in slot order through the inverse.
 */
export class Permutation {
  private readonly half: number
  private readonly mask: number
  private readonly keys: ReadonlyArray<number>

  constructor(
    readonly size: number,
    seed: number
  ) {
    if (!(size >= 1 && size <= 2 ** 30)) throw new RangeError(`permutation size ${size} outside [1, 2^30]`)
    const bits = Math.max(2, Math.ceil(Math.log2(size)))
    this.half = Math.ceil(bits / 2)
    this.mask = (1 << this.half) - 1
    this.keys = [0, 1, 2, 3].map((r) => mix32(seed, 0x5eed + r))
  }

  apply(x: number): number {
    do x = this.round(x)
    while (x >= this.size)
    return x
  }

  invert(y: number): number {
    do y = this.unround(y)
    while (y >= this.size)
    return y
  }

  private round(x: number): number {
    let l = x >>> this.half
    let r = x & this.mask
    for (let i = 0; i < 4; i++) {
      const next = (l ^ fmix32(r ^ this.keys[i]!)) & this.mask
      l = r
      r = next
    }
    return ((l << this.half) | r) >>> 0
  }

  private unround(y: number): number {
    let l = y >>> this.half
    let r = y & this.mask
    for (let i = 3; i >= 0; i--) {
      const previous = (r ^ fmix32(l ^ this.keys[i]!)) & this.mask
      r = l
      l = previous
    }
    return ((l << this.half) | r) >>> 0
  }
}

/** sfc32: a small, fast, seeded PRNG (no ambient randomness anywhere in the chain). */
export class Prng {
  private a: number
  private b: number
  private c: number
  private d: number

  constructor(...seeds: ReadonlyArray<number>) {
    this.a = mix32(seeds[0] ?? 0, 1, seeds[1] ?? 0, seeds[2] ?? 0)
    this.b = mix32(seeds[0] ?? 0, 2, seeds[1] ?? 0, seeds[2] ?? 0)
    this.c = mix32(seeds[0] ?? 0, 3, seeds[1] ?? 0, seeds[2] ?? 0)
    this.d = 1
    for (let i = 0; i < 12; i++) this.nextU32()
  }

  nextU32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0
    this.d = (this.d + 1) | 0
    this.a = this.b ^ (this.b >>> 9)
    this.b = (this.c + (this.c << 3)) | 0
    this.c = (this.c << 21) | (this.c >>> 11)
    this.c = (this.c + t) | 0
    return t >>> 0
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextU32() / 2 ** 32
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n)
  }

  chance(p: number): boolean {
    return this.next() < p
  }

  /** A standard normal deviate (Box-Muller). */
  normal(): number {
    const u = 1 - this.next()
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next())
  }

  /**
   * A Zipf-like rank in [0, n) with exponent s (s = 0 is uniform): the continuous inverse CDF of
   * 1/(x+1)^s, so rank 0 is the most likely. Cheap enough to draw per transaction.
   */
  zipf(n: number, s: number): number {
    const u = this.next()
    if (s === 0) return Math.floor(u * n)
    if (Math.abs(s - 1) < 1e-9) return Math.min(n - 1, Math.floor(Math.exp(u * Math.log(n + 1)) - 1))
    const a = 1 - s
    const x = (u * ((n + 1) ** a - 1) + 1) ** (1 / a) - 1
    return Math.min(n - 1, Math.floor(x))
  }
}
