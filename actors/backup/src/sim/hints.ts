/**
 * What a simulated stream carries as a block's hint: the primary's, or one of the ways a hint goes wrong
 * (§2.3: a hint is advisory; a wrong one may only cost time). Built and decoded once per block and kind.
 */
import { compressHint, type Hint, KEY_BYTES, Prng, Source, serializeHint } from "@reef/chain"
import type { HintFailure } from "../core/follower.js"
import { decodeHintFrame } from "../replay/replayer.js"
import { primaryChain } from "./primary.js"

export const HINT_KINDS = [
  "honest",
  /** A valid hint listing nothing. */
  "empty",
  /** A valid hint missing half its keys. */
  "truncated",
  /** The frame cut in half. */
  "cut",
  "shuffled",
  /** A byte of the frame flipped. */
  "corrupted",
  /** As many keys as the honest one, all random. */
  "spurious",
  /** The honest keys with lying sources: plain claimed zero, change set claimed plain. */
  "lying",
  /** The next block's hint. */
  "other-block",
  /** A well-formed frame whose content is not a hint. */
  "garbage"
] as const
export type HintKind = (typeof HINT_KINDS)[number]

const rehint = (hint: Hint, change: (h: Hint) => Hint) => serializeHint(change(hint))

const frameOf = (number: number, kind: HintKind): Uint8Array => {
  const { blocks } = primaryChain()
  const { hint, frame } = blocks[number - 1]!
  const rng = new Prng(number, 0x5eed)
  switch (kind) {
    case "honest":
      return frame
    case "empty":
      return rehint(hint, (h) => ({ ...h, storage: [], sources: new Uint8Array(0), code: [] }))
    case "truncated": {
      const half = hint.storage.length >> 1
      return rehint(hint, (h) => ({ ...h, storage: h.storage.slice(0, half), sources: h.sources.slice(0, half) }))
    }
    case "cut":
      return frame.subarray(0, frame.length >> 1)
    case "shuffled":
      return rehint(hint, (h) => {
        const order = h.storage.map((_, i) => i)
        for (let i = order.length - 1; i > 0; i--) {
          const j = rng.int(i + 1)
          ;[order[i], order[j]] = [order[j]!, order[i]!]
        }
        return {
          ...h,
          storage: order.map((i) => h.storage[i]!),
          sources: Uint8Array.from(order.map((i) => h.sources[i]!))
        }
      })
    case "corrupted": {
      const copy = Buffer.from(frame)
      copy[rng.int(copy.length)]! ^= 0x5a
      return copy
    }
    case "spurious":
      return rehint(hint, (h) => ({
        ...h,
        storage: h.storage.map(() =>
          Buffer.from(Array.from({ length: KEY_BYTES }, () => rng.int(256))).toString("latin1")
        )
      }))
    case "lying":
      return rehint(hint, (h) => ({
        ...h,
        sources: h.sources.map((s) => (s === Source.Plain ? Source.Zero : s === Source.Changeset ? Source.Plain : s))
      }))
    case "other-block":
      return blocks[number % blocks.length]!.frame
    case "garbage":
      return compressHint(Buffer.alloc(64, "not a hint "))
  }
}

const decoded = new Map<string, Hint | { readonly error: HintFailure }>()

/** The hint of `kind` for block `number`, as the shell hands it to the core (decoded, or why not). */
export const simHint = (number: number, kind: HintKind): Hint | { readonly error: HintFailure } => {
  const key = `${number}/${kind}`
  let hint = decoded.get(key)
  if (hint === undefined) {
    hint = decodeHintFrame(frameOf(number, kind), number)
    decoded.set(key, hint)
  }
  return hint
}
