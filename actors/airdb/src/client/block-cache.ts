/** A bounded cache of decoded snapshot blocks, least recently used out first, bounded in bytes. */
import type { KeyStateEntry } from "../core/blocks.js"

export interface CachedBlock {
  readonly entries: ReadonlyArray<KeyStateEntry>
  readonly bytes: number
}

export class BlockCache {
  private readonly blocks = new Map<string, CachedBlock>()
  private used = 0
  hits = 0
  misses = 0

  constructor(readonly capacityBytes: number) {}

  static key(segment: string, position: number): string {
    return `${segment}@${position}`
  }

  get(key: string): CachedBlock | undefined {
    const b = this.blocks.get(key)
    if (b === undefined) {
      this.misses++
      return undefined
    }
    this.hits++
    // Map keeps insertion order: re-inserting marks it most recently used.
    this.blocks.delete(key)
    this.blocks.set(key, b)
    return b
  }

  put(key: string, block: CachedBlock): void {
    const old = this.blocks.get(key)
    if (old !== undefined) {
      this.used -= old.bytes
      this.blocks.delete(key)
    }
    if (block.bytes > this.capacityBytes) return
    this.blocks.set(key, block)
    this.used += block.bytes
    for (const [k, b] of this.blocks) {
      if (this.used <= this.capacityBytes) break
      this.blocks.delete(k)
      this.used -= b.bytes
    }
  }

  /** Drops every block of a segment (a snapshot merged away). */
  dropSegment(segment: string): void {
    const prefix = `${segment}@`
    for (const [k, b] of this.blocks) {
      if (k.startsWith(prefix)) {
        this.blocks.delete(k)
        this.used -= b.bytes
      }
    }
  }

  get usedBytes(): number {
    return this.used
  }

  get size(): number {
    return this.blocks.size
  }
}
