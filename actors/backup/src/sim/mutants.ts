/**
 * Deliberately broken followers. The simulator must catch each one; if it ever stops doing so, its checks
 * have gone blind (a checker that cannot fail proves nothing).
 */
import { createFollower, type FollowerInput, type FollowerState, stepFollower } from "../core/follower.js"
import type { SimHooks } from "./world.js"

/** The block the executor is on, as the core holds it. */
const current = (s: FollowerState) => {
  const batch = s.batches[0]
  return batch === undefined ? undefined : batch.blocks[batch.done]
}

/** Reports the run of the current block as matching the primary's hash, whatever it computed. */
const asIfMatching = (s: FollowerState, input: Extract<FollowerInput, { _tag: "Executed" }>) =>
  stepFollower(s, { ...input, stateHash: current(s)?.block.stateHash ?? input.stateHash })

export const MUTANTS: ReadonlyMap<string, SimHooks> = new Map<string, SimHooks>([
  [
    // Trusts the values a hint led to: a hinted run is never checked against the primary's hash.
    "trust-hint",
    {
      step: (s, input) =>
        input._tag === "Executed" && input.mode === "prefetched" && current(s)?.hint._tag === "Accepted"
          ? asIfMatching(s, input)
          : stepFollower(s, input)
    }
  ],
  [
    // Skips verification altogether.
    "skip-verify",
    { step: (s, input) => (input._tag === "Executed" ? asIfMatching(s, input) : stepFollower(s, input)) }
  ],
  [
    // A hinted run that differs stops the backup instead of running the block again on demand.
    "no-fallback",
    {
      step: (s, input) => {
        const running = current(s)
        if (input._tag !== "Executed" || running === undefined || running.hint._tag !== "Accepted") {
          return stepFollower(s, input)
        }
        const batch = s.batches[0]!
        const blocks = batch.blocks.map((b, i) =>
          i === batch.done ? { ...b, hint: { _tag: "Refused", reason: "missing" } as const } : b
        )
        return stepFollower({ ...s, batches: [{ ...batch, blocks }, ...s.batches.slice(1)] }, input)
      }
    }
  ],
  // A restarted backup resumes one block past what its store holds.
  ["resume-ahead", { create: (params, head) => createFollower(params, head + 1) }],
  // ... or one block before it (re-applying the store's last block).
  ["resume-behind", { create: (params, head) => createFollower(params, Math.max(0, head - 1)) }],
  [
    // Takes a block it already batched as new.
    "no-dedup",
    {
      step: (s, input) =>
        input._tag === "BlockArrived" && input.block.number < s.nextBatch && input.block.number > s.verified
          ? stepFollower({ ...s, nextBatch: input.block.number }, input)
          : stepFollower(s, input)
    }
  ],
  [
    // Moves on past a block that did not come.
    "skip-gap",
    {
      step: (s, input) =>
        input._tag === "BlockArrived" && input.block.number > s.nextBatch && !s.blocks.has(s.nextBatch)
          ? stepFollower({ ...s, nextBatch: input.block.number }, input)
          : stepFollower(s, input)
    }
  ]
])
