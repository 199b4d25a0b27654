/**
 * The state digest: an additive multiset hash over objects. Each (key, version, value) hashes to 256 bits
 * (SHA-256) and the digest is their sum modulo 2^256, with the object count and the sum of versions. Digests of
 * disjoint sets add up to the digest of their union, so every worker digests what it holds, the coordinator
 * adds them up, and the total equals the reference executor's digest of the same state.
 */
import { createHash } from "node:crypto"
import type { StateDigest } from "@reef/proto"

const HASH_BYTES = 32

export class StateDigestSum {
  objects = 0
  versionSum = 0
  readonly hashSum = new Uint8Array(HASH_BYTES)

  add(key: string, version: number, value: Uint8Array): this {
    const prefix = Buffer.alloc(9)
    prefix.writeUInt8(0, 0)
    prefix.writeDoubleLE(version, 1)
    const h = createHash("sha256").update(key, "utf8").update(prefix).update(value).digest()
    this.addBytes(h)
    this.objects++
    this.versionSum += version
    return this
  }

  merge(other: StateDigest): this {
    this.addBytes(other.hashSum)
    this.objects += other.objects
    this.versionSum += other.versionSum
    return this
  }

  private addBytes(bytes: Uint8Array): void {
    let carry = 0
    for (let i = 0; i < HASH_BYTES; i++) {
      const s = this.hashSum[i]! + (bytes[i] ?? 0) + carry
      this.hashSum[i] = s & 0xff
      carry = s >> 8
    }
  }

  toProto(): StateDigest {
    return { objects: this.objects, versionSum: this.versionSum, hashSum: Buffer.from(this.hashSum), generation: 0 }
  }

  /** One hex string for the whole digest (count, version sum and hash sum). */
  hex(): string {
    return stateHashOf(this.toProto())
  }
}

export const stateHashOf = (digest: StateDigest): string => {
  const counts = Buffer.alloc(16)
  counts.writeDoubleLE(digest.objects, 0)
  counts.writeDoubleLE(digest.versionSum, 8)
  return createHash("sha256").update(counts).update(digest.hashSum).digest("hex")
}
