import { describe, expect, it } from "vitest"
import { randomSigningKey, SignatureVerifier, signBytes, signingKeyFromSeed } from "./signing.js"

describe("Ed25519 signing (node:crypto)", () => {
  const verifier = new SignatureVerifier(2)
  const message = new TextEncoder().encode("a transaction body")

  it("a seed always gives the same key, and its signatures verify", () => {
    const a = signingKeyFromSeed(new Uint8Array(32).fill(1))
    const b = signingKeyFromSeed(new Uint8Array(32).fill(1))
    expect(a.publicKey).toEqual(b.publicKey)
    expect(a.publicKey.length).toBe(32)
    expect(verifier.verify(a.publicKey, message, signBytes(a, message))).toBe(true)
  })

  it("rejects a flipped bit, another key, another message, and malformed keys or signatures", () => {
    const key = randomSigningKey()
    const sig = signBytes(key, message)
    const flipped = sig.slice()
    flipped[10]! ^= 1
    expect(verifier.verify(key.publicKey, message, flipped)).toBe(false)
    expect(verifier.verify(randomSigningKey().publicKey, message, sig)).toBe(false)
    expect(verifier.verify(key.publicKey, new Uint8Array([1]), sig)).toBe(false)
    expect(verifier.verify(key.publicKey.slice(1), message, sig)).toBe(false)
    expect(verifier.verify(key.publicKey, message, sig.slice(1))).toBe(false)
    expect(verifier.verify(new Uint8Array(32).fill(0xff), message, sig)).toBe(false)
  })
})
