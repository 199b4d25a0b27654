/**
 * Where a chain's blocks and hints live on NATS. Two JetStream streams per chain, one message per block
 * each, published with an expected last sequence so that a stream's sequence number *is* the block number
 * (a gap or a repeat is refused by the server): a backup that starts late or restarts reads from its head + 1.
 * Blocks and hints are separate streams (§I.2's sideband transmission): a backup without hints reads blocks
 * only, and a lost or late hint costs its block the prefetch, never the block.
 */
import type { JetStreamManager } from "@nats-io/jetstream"
import { DiscardPolicy, RetentionPolicy, StorageType } from "@nats-io/jetstream"
import { type BusError, Nats, natsConnectionLayer } from "@reef/kernel"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"

export interface ChainStreams {
  readonly blocks: { readonly stream: string; readonly subject: string }
  readonly hints: { readonly stream: string; readonly subject: string }
  /** KV bucket holding the chain's ChainInfo (its genesis), under the key `genesis`. */
  readonly info: string
}

export const GENESIS_INFO_KEY = "genesis"
export const CHAIN_BLOCK_TYPE = "reef.v1.ChainBlock"
export const CHAIN_HINT_TYPE = "reef.v1.ChainHint"

export const chainStreams = (cluster: string, chain: string): ChainStreams => ({
  blocks: { stream: `REEF_${cluster}_IRA_${chain}_BLOCKS`, subject: `reef.${cluster}.ira.${chain}.blocks` },
  hints: { stream: `REEF_${cluster}_IRA_${chain}_HINTS`, subject: `reef.${cluster}.ira.${chain}.hints` },
  info: `REEF_${cluster}_IRA_${chain}`
})

/** Bytes kept per stream: older blocks are dropped; a backup further behind starts from a store copy. */
export const STREAM_MAX_BYTES = { blocks: 1024 * 2 ** 20, hints: 2048 * 2 ** 20 } as const

/** Creates the chain's streams if they do not exist (idempotent). */
export const ensureChainStreams = async (jsm: JetStreamManager, streams: ChainStreams): Promise<void> => {
  for (const [which, { stream, subject }] of [
    ["blocks", streams.blocks],
    ["hints", streams.hints]
  ] as const) {
    try {
      await jsm.streams.info(stream)
    } catch {
      await jsm.streams.add({
        name: stream,
        subjects: [subject],
        storage: StorageType.File,
        retention: RetentionPolicy.Limits,
        discard: DiscardPolicy.Old,
        max_bytes: STREAM_MAX_BYTES[which],
        max_msg_size: 1024 * 1024,
        allow_direct: true,
        num_replicas: 1
      })
    }
  }
}

/** The last sequence of a stream: the newest block published there (0 for none). */
export const lastBlockOf = async (jsm: JetStreamManager, stream: string): Promise<number> =>
  (await jsm.streams.info(stream)).state.last_seq

/** A NATS connection of the actor's own for its streams (JetStream), closed with the current scope. */
export const streamConnection = (
  servers: string,
  name: string
): Effect.Effect<Context.Tag.Service<typeof Nats>, BusError, Scope.Scope> =>
  Effect.map(Layer.build(natsConnectionLayer({ servers, name })), (context) => Context.get(context, Nats))
