/**
 * Warms an engine thread's hot paths before it joins its group. V8 runs new code in its interpreter until the
 * code is hot, and compiles it on background threads that compete with every engine for this machine's two
 * cores. Without a warm-up, the first burst of client values after an idle start went through cold code on
 * every engine at once, and replicas of 7 self-quit at the very start of a failure-free benchmark. The
 * software NIC should be as ready as the FPGA it stands for.
 *
 * A private group of engine loops (the real `createEngineLoop`, wire codec and core) runs a few instances with
 * batches of client values on an in-memory network and a virtual clock, with the round-close mode the engine
 * will run. Nothing leaves the thread and no state is kept. Its values look like a replica's: a few per
 * instance (a replica proposes one KvBatch per turn of its event loop) of a few KiB each; 64 small ones per
 * instance, from before KvBatch, also left a heap peak in the engine thread that it then kept committed.
 */
import { makeRoundTimerConfig } from "./core/index.js"
import { createEngineLoop, type EngineEvent, type EngineLoop } from "./engine-loop.js"

export interface WarmUpOptions {
  readonly instances?: number
  readonly valuesPerInstance?: number
  readonly payloadBytes?: number
  /** RoundTimerConfig.closeOnAllHeard of the engine being warmed. */
  readonly closeOnAllHeard?: boolean
}

export interface WarmUpReport {
  /** Instances every member of the private group decided. */
  readonly instances: number
  readonly elapsedMs: number
}

const MEMBERS = ["warm-0", "warm-1", "warm-2"]
/** Bound on simulated events: a warm-up must end whatever happens. */
const MAX_EVENTS = 200_000

export const warmUpEngine = (options: WarmUpOptions = {}): WarmUpReport => {
  const started = performance.now()
  const instances = options.instances ?? 40
  const perInstance = options.valuesPerInstance ?? 4
  const payload = new Uint8Array(options.payloadBytes ?? 2048).fill(7)
  let nowMs = 0
  const deliveries: Array<() => void> = []
  const timers: Array<{ readonly atMs: number; readonly fire: () => void }> = []
  const decided = new Map<string, number>()
  const loops = new Map<string, EngineLoop>()
  for (const self of MEMBERS) {
    const onEvent = (event: EngineEvent) => {
      if (event._tag === "Decided") decided.set(self, event.instance)
    }
    const loop = createEngineLoop(
      {
        group: "warm-up",
        self,
        incarnation: `${self}@0`,
        members: MEMBERS,
        roundTimer: makeRoundTimerConfig({
          interactionMs: 1,
          driftMs: 0.1,
          ...(options.closeOnAllHeard === true ? { closeOnAllHeard: true } : {})
        }),
        maxBatchBytes: 256 * 1024
      },
      {
        send: (to, bytes) => deliveries.push(() => loops.get(to)?.onWire(bytes)),
        setTimer: (afterMs, fire) => {
          timers.push({ atMs: nowMs + afterMs, fire })
          return undefined
        },
        nowMs: () => nowMs,
        wallUs: () => nowMs * 1000,
        emit: onEvent
      }
    )
    loops.set(self, loop)
  }
  let requestId = 0
  const propose = () => {
    for (const loop of loops.values()) {
      for (let i = 0; i < perInstance; i++) loop.onCommand({ _tag: "Broadcast", requestId: requestId++, payload })
    }
  }
  const least = () => Math.min(...MEMBERS.map((m) => decided.get(m) ?? 0))
  for (const loop of loops.values()) loop.onCommand({ _tag: "SyncStart" })
  propose()
  let lastProposedAt = 0
  for (let events = 0; events < MAX_EVENTS && least() < instances; events++) {
    const delivery = deliveries.shift()
    if (delivery !== undefined) {
      delivery()
    } else {
      // Every message of the round is in: move the clock to the next timer.
      timers.sort((a, b) => a.atMs - b.atMs)
      const timer = timers.shift()
      if (timer === undefined) break
      nowMs = Math.max(nowMs, timer.atMs)
      timer.fire()
    }
    if (least() > lastProposedAt) {
      lastProposedAt = least()
      propose()
    }
  }
  return { instances: least(), elapsedMs: performance.now() - started }
}
