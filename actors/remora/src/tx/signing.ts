/**
 * Ed25519 with node:crypto: the client signs a transaction's encoded body; the stateless part of execution
 * verifies it for real. Keys travel raw (32-byte public keys, 32-byte seeds); KeyObjects are built once per key.
 */
import { createPrivateKey, createPublicKey, type KeyObject, randomBytes, sign, verify } from "node:crypto"

export const PUBLIC_KEY_BYTES = 32
export const SIGNATURE_BYTES = 64

// DER prefixes of an Ed25519 SubjectPublicKeyInfo and PKCS#8 private key: followed by the raw 32 bytes.
const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex")
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex")

export interface SigningKey {
  readonly seed: Uint8Array
  readonly publicKey: Uint8Array
  readonly privateKey: KeyObject
}

/** A signing key from a 32-byte seed (deterministic: the same seed always gives the same key). */
export const signingKeyFromSeed = (seed: Uint8Array): SigningKey => {
  if (seed.length !== 32) throw new Error(`an Ed25519 seed has 32 bytes, got ${seed.length}`)
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: "der", type: "pkcs8" })
  const spki = createPublicKey(privateKey).export({ format: "der", type: "spki" })
  return { seed, publicKey: new Uint8Array(spki.subarray(SPKI_PREFIX.length)), privateKey }
}

export const randomSigningKey = (): SigningKey => signingKeyFromSeed(randomBytes(32))

export const signBytes = (key: SigningKey, message: Uint8Array): Uint8Array =>
  new Uint8Array(sign(null, message, key.privateKey))

/** Verifies Ed25519 signatures, keeping the KeyObjects of the last `capacity` public keys it saw. */
export class SignatureVerifier {
  private readonly keys = new Map<string, KeyObject>()

  constructor(private readonly capacity = 4096) {}

  verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
    if (publicKey.length !== PUBLIC_KEY_BYTES || signature.length !== SIGNATURE_BYTES) return false
    const id = Buffer.from(publicKey.buffer, publicKey.byteOffset, publicKey.byteLength).toString("base64")
    let key = this.keys.get(id)
    if (key === undefined) {
      try {
        key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: "der", type: "spki" })
      } catch {
        return false
      }
      if (this.keys.size >= this.capacity) this.keys.delete(this.keys.keys().next().value!)
      this.keys.set(id, key)
    }
    try {
      return verify(null, message, key, signature)
    } catch {
      return false
    }
  }
}
