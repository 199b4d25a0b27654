/**
 * Zipfian ranks in [0, n) with skew θ (YCSB's ZipfianGenerator, after Gray et al., "Quickly generating
 * billion-record synthetic databases"): rank 0 is the hottest. θ = 0 is uniform. Deterministic from its PRNG.
 */
import type { Prng } from "../core/prng.js"

export class ZipfGenerator {
  private readonly alpha: number
  private readonly zetan: number
  private readonly eta: number
  private readonly half: number

  constructor(
    private readonly n: number,
    private readonly theta: number,
    private readonly prng: Prng
  ) {
    if (!Number.isInteger(n) || n < 1) throw new Error(`zipf: n must be a positive integer, got ${n}`)
    if (theta < 0 || theta >= 1) throw new Error(`zipf: θ must be in [0, 1), got ${theta}`)
    let zetan = 0
    for (let i = 1; i <= n; i++) zetan += 1 / i ** theta
    const zeta2 = 1 + 1 / 2 ** theta
    this.zetan = zetan
    this.alpha = 1 / (1 - theta)
    this.eta = (1 - (2 / n) ** (1 - theta)) / (1 - zeta2 / zetan)
    this.half = 1 + 0.5 ** theta
  }

  next(): number {
    if (this.theta === 0) return this.prng.below(this.n)
    const u = this.prng.float()
    const uz = u * this.zetan
    if (uz < 1) return 0
    if (uz < this.half) return 1
    return Math.min(this.n - 1, Math.floor(this.n * (this.eta * u - this.eta + 1) ** this.alpha))
  }

  /** `k` distinct ranks (k ≤ n). */
  distinct(k: number): Array<number> {
    const picked = new Set<number>()
    while (picked.size < k) picked.add(this.next())
    return [...picked]
  }
}
