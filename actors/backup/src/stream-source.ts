/**
 * The follower's source over the primary's JetStream streams: ordered consumers on the block and hint
 * streams from the block the core asks for (no server-side state: a restarted backup reads from anywhere),
 * delivering only within the core's credit, so the streams wait while the backup is behind.
 */
import { DeliverPolicy, type JetStreamClient, type JsMsg } from "@nats-io/jetstream"
import { type chainStreams, decodeTxs } from "@reef/chain"
import { TRACEPARENT_HEADER } from "@reef/kernel"
import { ChainBlock, ChainHint } from "@reef/proto"
import * as Effect from "effect/Effect"
import { decodeHintFrame, type MakeSource } from "./replay/replayer.js"

/** Lets a reader past block n once the credit is above n. */
class CreditGate {
  private until = 0
  private waiters: Array<{ readonly block: number; readonly resolve: () => void }> = []

  raise(until: number): void {
    if (until <= this.until) return
    this.until = until
    const ready = this.waiters.filter((w) => w.block < until)
    this.waiters = this.waiters.filter((w) => w.block >= until)
    for (const w of ready) w.resolve()
  }

  pass(block: number): Promise<void> | undefined {
    if (block < this.until) return undefined
    return new Promise((resolve) => this.waiters.push({ block, resolve }))
  }
}

interface Closeable {
  close(): Promise<void | Error>
}

export interface StreamSourceOptions {
  readonly js: JetStreamClient
  readonly streams: ReturnType<typeof chainStreams>
  readonly useHints: boolean
  /** A block's trace context, from its message's header (the backup's block span links to it). */
  readonly onTraceparent: (block: number, traceparent: string | undefined) => void
}

const logError = (message: string): void => void Effect.runFork(Effect.logError(message))

export const jetStreamSource =
  (options: StreamSourceOptions): MakeSource =>
  (offer) =>
    Effect.gen(function* () {
      const gate = new CreditGate()
      let generation = 0
      let open: Array<Closeable> = []
      const closeAll = async () => {
        const closing = open
        open = []
        await Promise.all(closing.map((c) => c.close()))
      }
      yield* Effect.addFinalizer(() => Effect.promise(closeAll))

      /** Reads `stream` from sequence `from` until a later fetch replaces this one. */
      const read = async (stream: string, from: number, handle: (message: JsMsg) => Promise<void>) => {
        const mine = generation
        const consumer = await options.js.consumers.get(stream, {
          opt_start_seq: from,
          deliver_policy: DeliverPolicy.StartSequence
        })
        const messages = await consumer.consume()
        if (mine !== generation) return void (await messages.close())
        open.push(messages)
        for await (const message of messages) {
          if (mine !== generation) break
          await handle(message)
        }
      }

      const fetch = (from: number) =>
        Effect.promise(async () => {
          generation++
          await closeAll()
          const mine = generation
          const blocks = read(options.streams.blocks.stream, from, async (message) => {
            const block = ChainBlock.decode(message.data)
            if (block.number !== message.seq) {
              return logError(`block stream sequence ${message.seq} carries block ${block.number}: skipped`)
            }
            await gate.pass(block.number)
            if (mine !== generation) return
            options.onTraceparent(block.number, message.headers?.get(TRACEPARENT_HEADER) || undefined)
            offer({
              _tag: "BlockArrived",
              block: { number: block.number, txs: decodeTxs(block.transactions), stateHash: block.stateHash }
            })
          })
          const hints = !options.useHints
            ? Promise.resolve()
            : read(options.streams.hints.stream, from, async (message) => {
                const hint = ChainHint.decode(message.data)
                if (hint.number !== message.seq) {
                  return logError(`hint stream sequence ${message.seq} carries block ${hint.number}: skipped`)
                }
                await gate.pass(hint.number)
                if (mine !== generation) return
                offer({ _tag: "HintArrived", block: hint.number, hint: decodeHintFrame(hint.frame, hint.number) })
              })
          // A stream that fails is read again when the follower finds its next block missing.
          for (const reading of [blocks, hints]) {
            void reading.catch((error) => logError(`reading the chain's streams from ${from}: ${String(error)}`))
          }
        })

      return { fetch, credit: (until) => Effect.sync(() => gate.raise(until)) }
    })
