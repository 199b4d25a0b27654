/**
 * A process start's identity (core/types.ts `Incarnation`): drawn once when a replica process starts, carried
 * in every value its engine proposes, so nothing its previous life proposed is ever taken for its own.
 */
import { randomBytes } from "node:crypto"
import type { Incarnation } from "./core/index.js"

/** A random 64-bit nonce as 16 hex digits. */
export const newIncarnation = (): Incarnation => randomBytes(8).toString("hex")
