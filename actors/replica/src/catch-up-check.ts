/**
 * What a joiner checks in a peer's catch-up answer and snapshot chunks before acting on them. The protobuf
 * decoder accepts any numbers, and the rejoin driver would otherwise act on them as they are: a chunk count
 * of 2^32 - 1 allocated an array that size, a decision whose values do not decode was dropped value by value
 * (found by fuzzing). A bad answer is refused whole, as if the peer had not answered. Pure.
 */
import { valueFromWire } from "@reef/nic"
import type { CatchUpReply, DeliveredWatermark, SnapshotChunkReply } from "@reef/proto"

/** Chunks of one snapshot at most: 2^16 chunks of 256 KiB hold a 16 GiB state, far beyond a replica's memory. */
export const MAX_SNAPSHOT_CHUNKS = 2 ** 16

const isCount = (n: number): boolean => Number.isSafeInteger(n) && n >= 0

const watermarkProblem = (w: DeliveredWatermark): string | undefined => {
  if (w.proposer === "" || w.incarnation === "") return "a delivered watermark without a proposer or incarnation"
  if (!isCount(w.floor)) return `a delivered floor of ${w.floor}`
  for (const seq of w.above) {
    if (!isCount(seq) || seq <= w.floor) return `a delivered seq ${seq} not above its floor ${w.floor}`
  }
  return undefined
}

/** Why `reply` cannot be acted on, or undefined when it can. */
export const catchUpReplyProblem = (reply: CatchUpReply): string | undefined => {
  let previous = 0
  for (const decision of reply.decisions) {
    if (!Number.isSafeInteger(decision.instance) || decision.instance <= previous) {
      return `decision instance ${decision.instance} after ${previous}`
    }
    previous = decision.instance
    for (const value of decision.values) {
      if (valueFromWire(value) === undefined) return `an invalid value in the decision of instance ${decision.instance}`
    }
  }
  if (!isCount(reply.joinInstance)) return `join instance ${reply.joinInstance}`
  for (const epoch of reply.schedule) {
    if (!isCount(epoch.fromInstance)) return `an epoch from instance ${epoch.fromInstance}`
    if (epoch.members.length === 0 || epoch.members.some((m) => m === "")) return "an epoch with an empty member"
  }
  if (!reply.hasSnapshot) return undefined
  if (!Number.isSafeInteger(reply.snapshotInstance) || reply.snapshotInstance < 1) {
    return `snapshot instance ${reply.snapshotInstance}`
  }
  if (reply.snapshotChunks < 1 || reply.snapshotChunks > MAX_SNAPSHOT_CHUNKS) {
    return `${reply.snapshotChunks} snapshot chunks (1 to ${MAX_SNAPSHOT_CHUNKS})`
  }
  if (!isCount(reply.snapshotCommands)) return `${reply.snapshotCommands} snapshot commands`
  if (reply.snapshotHash === "") return "a snapshot without a state hash"
  for (const w of reply.snapshotDelivered) {
    const problem = watermarkProblem(w)
    if (problem !== undefined) return problem
  }
  return undefined
}

/**
 * Why a snapshot chunk cannot be installed, or undefined. Chunks are cut from a state's sorted keys
 * (snapshot.ts), so keys rise strictly: a repeated key would silently overwrite another entry.
 */
export const snapshotChunkProblem = (chunk: SnapshotChunkReply): string | undefined => {
  let previous: string | undefined
  for (const entry of chunk.entries) {
    if (previous !== undefined && !(entry.key > previous)) return `key ${JSON.stringify(entry.key)} out of order`
    if (!isCount(entry.version)) return `version ${entry.version} of key ${JSON.stringify(entry.key)}`
    previous = entry.key
  }
  return undefined
}
