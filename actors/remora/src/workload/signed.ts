/** The real signer: Ed25519 over the encoded body; an invalid transaction gets one signature bit flipped. */
import { type SigningKey, signBytes } from "../tx/signing.js"
import { asBuffer, type Signer } from "./generators.js"

export const ed25519Signer =
  (key: SigningKey): Signer =>
  (body, valid) => {
    const signature = signBytes(key, body)
    if (!valid) signature[signature.length - 1]! ^= 0x01
    return { body: asBuffer(body), publicKey: asBuffer(key.publicKey), signature: asBuffer(signature) }
  }
