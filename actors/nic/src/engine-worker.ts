/**
 * The NIC engine thread: the software analogue of the paper's FPGA. It owns its own NATS connection, its
 * round timers and the consensus state, so the host's event loop (gRPC, state machine, GC pauses of the
 * replica) cannot delay a round. The host talks to it only through messages (EngineCommand / EngineEvent),
 * like a host talks to its NIC over PCIe.
 *
 * Bootstrap: calibrate the round timer from measured interaction latency with every peer (probe
 * request/reply), agree on the group's timer by exchanging calibrations and taking the maximum, then
 * start the engine loop.
 */
import { readlinkSync } from "node:fs"
import { parentPort, workerData } from "node:worker_threads"
import { connect, createInbox } from "@nats-io/transport-node"
import { natsConnectOptions } from "@reef/kernel/nats-security"
import { calibrateRoundTimer, makeRoundTimerConfig, type RoundTimerConfig } from "./core/index.js"
import { createEngineLoop, type EngineCommand, type EngineConfig, type EngineEvent } from "./engine-loop.js"
import {
  calibrationSubject,
  engineGroupSubject,
  engineSubject,
  livenessSubject,
  probeSubject
} from "./engine-subjects.js"
import { warmUpEngine } from "./engine-warmup.js"
import { ENGINE_THREAD_NAME, nameThisThread } from "./thread-name.js"

export interface EngineWorkerData {
  readonly natsUrl: string
  readonly cluster: string
  readonly config: Omit<EngineConfig, "roundTimer">
  /** Fixed ΔI in ms; when absent the engine calibrates at bootstrap. */
  readonly interactionMs?: number
  /** Lower bound on a calibrated ΔI (a shared, noisy machine has scheduling hiccups). */
  readonly minInteractionMs: number
  /** Host-turnaround gap between instances in ms (RoundTimerConfig.instanceGapMs); `defaultInstanceGapMs`. */
  readonly instanceGapMs?: number
  /** RoundTimerConfig.closeOnAllHeard. */
  readonly closeOnAllHeard: boolean
  readonly calibrationProbes: number
  readonly safetyFactor: number
}

export type WorkerToHost =
  | {
      readonly _tag: "Ready"
      readonly roundTimer: RoundTimerConfig
      readonly samples: number
      /** This thread's Linux thread id (so the host can lower every other thread's priority), if known. */
      readonly threadId: number | undefined
    }
  /** Events of one turn of the engine's event loop, in order (one postMessage, not one per event). */
  | { readonly _tag: "Events"; readonly events: ReadonlyArray<EngineEvent> }
  | { readonly _tag: "Log"; readonly level: "info" | "warn"; readonly message: string }

/** Commands are batched like events: the host sends what one turn of its event loop produced at once. */
export type HostToWorker =
  | { readonly _tag: "Commands"; readonly commands: ReadonlyArray<EngineCommand> }
  | { readonly _tag: "Stop" }

/** `/proc/thread-self` links to `<pid>/task/<tid>` on Linux; undefined elsewhere. */
const linuxThreadId = (): number | undefined => {
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop())
    return Number.isInteger(tid) && tid > 0 ? tid : undefined
  } catch {
    return undefined
  }
}

const data = workerData as EngineWorkerData
const port = parentPort!
const post = (m: WorkerToHost) => port.postMessage(m)
const { group, self, members } = data.config

nameThisThread(ENGINE_THREAD_NAME)

// Before anything is timed (calibration probes included): see engine-warmup.ts.
warmUpEngine({ closeOnAllHeard: data.closeOnAllHeard })

// Credentials and TLS as the host's (the thread inherits its environment: nats-security.ts).
const nc = await connect(
  natsConnectOptions({
    servers: data.natsUrl,
    name: `reef-nic-${group}-${self}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 100,
    noAsyncTraces: true,
    // The group subject reaches every engine; this one must not hear its own round messages back.
    noEcho: true
  })
)
const encoder = new TextEncoder()
const decoder = new TextDecoder()

// Probes are answered from the first moment, so peers can calibrate against this engine.
nc.subscribe(probeSubject(data.cluster, group, self), {
  callback: (_e, m) => {
    m.respond()
  }
})
// Peers' liveness probes (probePeer below) are ignored, from the first moment too: being subscribed is the answer.
nc.subscribe(livenessSubject(data.cluster, group, self), { callback: () => undefined })

const peers = members.filter((m) => m !== self)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Waits until the peers' engines answer a probe: the group is up and subscribed (sync-start needs it). Every
 * peer is awaited for a while; after that a majority is enough, so a restarted engine whose group lost a
 * member for good (at most t) still starts and rejoins.
 */
const awaitPeers = async (): Promise<void> => {
  const answered = new Set<string>()
  const allUntil = Date.now() + 10_000
  for (let attempt = 0; answered.size < peers.length; attempt++) {
    await Promise.all(
      peers
        .filter((peer) => !answered.has(peer))
        .map((peer) =>
          nc
            .request(probeSubject(data.cluster, group, peer), undefined, { timeout: 500 })
            .then(() => void answered.add(peer))
            .catch(() => undefined)
        )
    )
    const majority = (answered.size + 1) * 2 > members.length
    if (answered.size === peers.length || (majority && Date.now() > allUntil)) return
    if (attempt % 20 === 19) {
      const missing = peers.filter((p) => !answered.has(p))
      post({ _tag: "Log", level: "info", message: `waiting for engines ${missing.join(", ")}` })
    }
    await sleep(100)
  }
}

/** Round-trip halves to every peer. */
const measure = async (): Promise<Array<number>> => {
  const samples: Array<number> = []
  for (let i = 0; i < data.calibrationProbes; i++) {
    for (const peer of peers) {
      const t0 = performance.now()
      await nc.request(probeSubject(data.cluster, group, peer), undefined, { timeout: 2000 }).catch(() => undefined)
      samples.push((performance.now() - t0) / 2)
    }
  }
  return samples
}

/**
 * Every engine announces its ΔI; all use the maximum, so the group agrees on one round period. An engine
 * that already runs answers every later announcement with its final value, which a (re)joining engine
 * adopts at once: the group's period never changes under a running group.
 */
interface Calibration {
  readonly from: string
  readonly interactionMs: number
  readonly final: boolean
  /** Not a value: "does a group run already?" (`askRunningGroup`), answered like any announcement. */
  readonly query: boolean
}
let agreedMs: number | undefined
/** How long an engine waits for its peers' calibrations before taking the largest it has. */
const AGREE_TIMEOUT_MS = 15_000
const announce = (interactionMs: number, final: boolean, query = false) =>
  nc.publish(
    calibrationSubject(data.cluster, group),
    encoder.encode(JSON.stringify({ from: self, interactionMs, final, query }))
  )

/** How long a starting engine waits for a running group's value before it measures its own. */
const ASK_GROUP_MS = 250

/**
 * A restarted or rejoining engine would adopt the running group's value anyway (see above): it asks for it
 * first and skips the probes, most of its start-up CPU after the modules. A new group's engines hear no
 * final value and measure.
 */
const askRunningGroup = async (): Promise<number | undefined> => {
  const sub = nc.subscribe(calibrationSubject(data.cluster, group))
  const giveUp = setTimeout(() => sub.unsubscribe(), ASK_GROUP_MS)
  announce(0, false, true)
  let result: number | undefined
  for await (const m of sub) {
    const c = parseCalibration(m.data)
    if (c?.final && members.includes(c.from)) {
      result = c.interactionMs
      break
    }
  }
  clearTimeout(giveUp)
  if (!sub.isClosed()) sub.unsubscribe()
  return result
}

const agree = async (mine: number): Promise<number> => {
  const seen = new Map<string, number>([[self, mine]])
  // A group of one agrees with itself: this connection never hears its own announcements (noEcho).
  if (seen.size === members.length) return mine
  const sub = nc.subscribe(calibrationSubject(data.cluster, group))
  const ticker = setInterval(() => announce(mine, false), 100)
  announce(mine, false)
  // Ends the wait when peers stay silent: the loop below only looks at the clock when a message arrives.
  const giveUp = setTimeout(() => sub.unsubscribe(), AGREE_TIMEOUT_MS)
  let result: number | undefined
  for await (const m of sub) {
    const c = parseCalibration(m.data)
    if (c === undefined || c.query || !members.includes(c.from)) continue
    if (c.final) {
      result = c.interactionMs
      break
    }
    seen.set(c.from, c.interactionMs)
    if (seen.size === members.length) break
  }
  clearTimeout(giveUp)
  if (!sub.isClosed()) sub.unsubscribe()
  // Keep announcing for a moment so peers still agreeing collect this value too.
  setTimeout(() => clearInterval(ticker), 1_000)
  return result ?? Math.max(...seen.values())
}

/** A peer's announcement; undefined (ignored) for anything else on the subject. */
const parseCalibration = (bytes: Uint8Array): Calibration | undefined => {
  try {
    const c = JSON.parse(decoder.decode(bytes)) as Partial<Calibration>
    return typeof c.from === "string" && typeof c.interactionMs === "number" && Number.isFinite(c.interactionMs)
      ? { from: c.from, interactionMs: c.interactionMs, final: c.final === true, query: c.query === true }
      : undefined
  } catch {
    return undefined
  }
}

/** After agreeing, answer newcomers with the group's value. */
const serveAgreedValue = () =>
  nc.subscribe(calibrationSubject(data.cluster, group), {
    callback: (_e, m) => {
      const c = parseCalibration(m.data)
      if (c !== undefined && !c.final && c.from !== self && agreedMs !== undefined) announce(agreedMs, true)
    }
  })

await awaitPeers()
const MAX_CALIBRATED_INTERACTION_MS = 100
/**
 * Timed rounds: ΔI/3, enough for a lone client's next request to make the next instance, while a group under
 * load, where answering a whole batch takes longer than any small gap, pays little of its throughput for it
 * (a gap of ΔI cost more). Rounds closed on all heard: the gap is only taken by an idle engine and a proposal
 * ends it, so it just paces heartbeat instances; 3ΔI (about a timed round) keeps an idle group near the
 * instance rate of timed rounds instead of the CPU that ΔI/3's heartbeats cost.
 */
const defaultInstanceGapMs = (interactionMs: number) => (data.closeOnAllHeard ? 3 * interactionMs : interactionMs / 3)
/** ΔI: fixed by the host, or calibrated from probes and agreed with the peers (their largest). */
const resolveInteraction = async (): Promise<{ readonly interactionMs: number; readonly samples: number }> => {
  if (data.interactionMs !== undefined) return { interactionMs: data.interactionMs, samples: 0 }
  const running = peers.length === 0 ? undefined : await askRunningGroup()
  if (running !== undefined) return { interactionMs: running, samples: 0 }
  const measured = peers.length === 0 ? [0] : await measure()
  const calibrated = calibrateRoundTimer(measured, { safetyFactor: data.safetyFactor })
  // Capped: a calibration taken while the machine is saturated would otherwise stretch every round for good.
  const agreed = await agree(
    Math.min(MAX_CALIBRATED_INTERACTION_MS, Math.max(data.minInteractionMs, calibrated.interactionMs))
  )
  return { interactionMs: agreed, samples: measured.length }
}
const { interactionMs: agreedInteractionMs, samples } = await resolveInteraction()
// ΔW stays Alg. 3's 2ΔI (makeRoundTimerConfig's default). A window of ΔI (catch-up keeps correct replicas
// within one interaction after the first round) made timed rounds shorter and writes faster, but the shorter
// rounds no longer covered a loaded machine's scheduling tail: replicas of 5 and 7 self-quit in failure-free
// runs.
const roundTimer: RoundTimerConfig = makeRoundTimerConfig({
  interactionMs: agreedInteractionMs,
  driftMs: Math.max(0.05, agreedInteractionMs * 0.02),
  instanceGapMs: data.instanceGapMs ?? defaultInstanceGapMs(agreedInteractionMs),
  closeOnAllHeard: data.closeOnAllHeard
})
agreedMs = roundTimer.interactionMs
serveAgreedValue()

/**
 * Gone peers (engine-timers.ts). A probe is one publish to the peer engine's liveness subject, with a reply
 * subject of this engine's that names the peer. A live peer's engine ignores it (nothing is sent back); when no
 * connection subscribes there, because the peer's process died or lost the server, the server itself answers
 * "no responders" (status 503) on the reply subject. So a live peer costs one small message, no reply, timer,
 * promise or error object, however many rounds wait for it: rounds of a loaded group wait past ΔI/2 often.
 */
const livenessReplies = createInbox()
/** Peers probed, and when: one probe per peer per quarter ΔI, however many rounds ask (the loop asks every ΔI/2). */
const probedAt = new Map<string, number>()
/** What to call when the server says a peer is gone: the latest asker's (every one reports the same Gone input). */
const goneCallbacks = new Map<string, () => void>()
nc.subscribe(`${livenessReplies}.*`, {
  callback: (_e, m) => {
    if (m.headers?.code !== 503) return
    const peer = m.subject.slice(livenessReplies.length + 1)
    const gone = goneCallbacks.get(peer)
    goneCallbacks.delete(peer)
    gone?.()
  }
})
const probePeer = (peer: string, gone: () => void) => {
  goneCallbacks.set(peer, gone)
  const now = performance.now()
  if (now - (probedAt.get(peer) ?? Number.NEGATIVE_INFINITY) < roundTimer.interactionMs / 4) return
  probedAt.set(peer, now)
  nc.publish(livenessSubject(data.cluster, group, peer), undefined, { reply: `${livenessReplies}.${peer}` })
}

let events: Array<EngineEvent> = []
const postEvents = () => {
  const batch = events
  events = []
  post({ _tag: "Events", events: batch })
}

const loop = createEngineLoop(
  { ...data.config, roundTimer },
  {
    send: (to, bytes) => nc.publish(engineSubject(data.cluster, group, to), bytes),
    sendToAll: (bytes) => nc.publish(engineGroupSubject(data.cluster, group), bytes),
    // A round closes in the event loop's check phase, after the poll phase has read every message already
    // waiting on the socket. Otherwise, when this thread was descheduled past a round's end, the expired
    // timer would run first (timers precede I/O in a loop iteration) and suspect peers whose messages had
    // arrived in time and were merely unread: the software analogue of a NIC reading its receive queue.
    setTimer: (afterMs, fire) => {
      let immediate: NodeJS.Immediate | undefined
      const timeout = setTimeout(() => {
        immediate = setImmediate(fire)
      }, afterMs)
      return () => {
        clearTimeout(timeout)
        if (immediate !== undefined) clearImmediate(immediate)
      }
    },
    probe: probePeer,
    nowMs: () => performance.now(),
    wallUs: () => (performance.timeOrigin + performance.now()) * 1000,
    emit: (event) => {
      // A postMessage per event (one per proposed value, "Queued") costs more than the step that made it. One
      // per pass of the event loop (setImmediate) instead of per task measured slower at N = 3 (interleaved
      // before/after in pnpm bench popuc-cost): a decision waited for the check phase to reach the host.
      if (events.length === 0) queueMicrotask(postEvents)
      events.push(event)
    }
  }
)
nc.subscribe(engineSubject(data.cluster, group, self), { callback: (_e, m) => loop.onWire(m.data) })
nc.subscribe(engineGroupSubject(data.cluster, group), { callback: (_e, m) => loop.onWire(m.data) })
await nc.flush()

port.on("message", (message: HostToWorker) => {
  if (message._tag === "Stop") {
    void nc.drain().finally(() => process.exit(0))
    return
  }
  for (const command of message.commands) loop.onCommand(command)
})
post({ _tag: "Ready", roundTimer, samples, threadId: linuxThreadId() })
