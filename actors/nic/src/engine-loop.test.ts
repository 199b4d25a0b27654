/**
 * The engine shell over an in-memory network with a virtual clock: N engines, real wire encoding, real timer
 * handling. The core's safety is the simulator's job; this checks the shell carries out the core's work.
 */
import { describe, expect, it } from "vitest"
import { initialSchedule, makeRoundTimerConfig, type Value } from "./core/index.js"
import { createEngineLoop, type EngineEvent, type EngineLoop } from "./engine-loop.js"
import { encodeWire } from "./wire.js"

interface Scheduled {
  readonly at: number
  readonly seq: number
  readonly run: () => void
}

interface ClusterOptions {
  readonly latencyMs?: number
  readonly closeOnAllHeard?: boolean
  /** Give the engines `sendToAll` (one publish per message to every peer) and count its use. */
  readonly groupSend?: boolean
  /** Give the engines `probe`: a crashed peer is reported gone after a round trip, a live one never. */
  readonly probe?: boolean
}

const cluster = (n: number, options: ClusterOptions = {}) => {
  const latencyMs = options.latencyMs ?? 1
  const sends = { toOne: 0, toAll: 0, probes: 0 }
  const ids = Array.from({ length: n }, (_, i) => `r${i + 1}`)
  let now = 0
  let seq = 0
  const queue: Array<Scheduled> = []
  const schedule = (afterMs: number, run: () => void) => {
    queue.push({ at: now + afterMs, seq: seq++, run })
    queue.sort((a, b) => a.at - b.at || a.seq - b.seq)
  }
  const events = new Map<string, Array<EngineEvent>>(ids.map((id) => [id, []]))
  /** Engines that stopped: they neither send, receive nor time out any more. */
  const crashed = new Set<string>()
  const deliver = (to: string, bytes: Uint8Array) =>
    schedule(latencyMs, () => {
      if (!crashed.has(to)) loops.get(to)!.onWire(bytes)
    })
  const loops = new Map<string, EngineLoop>()
  for (const id of ids) {
    loops.set(
      id,
      createEngineLoop(
        {
          group: "g",
          self: id,
          incarnation: `${id}@0`,
          members: ids,
          roundTimer: makeRoundTimerConfig({
            interactionMs: 2 * latencyMs,
            driftMs: 0.1,
            ...(options.closeOnAllHeard === true ? { closeOnAllHeard: true, instanceGapMs: 10 } : {})
          }),
          maxBatchBytes: 64 * 1024
        },
        {
          send: (to, bytes) => {
            if (crashed.has(id)) return
            sends.toOne++
            deliver(to, bytes)
          },
          ...(options.groupSend === true
            ? {
                sendToAll: (bytes: Uint8Array) => {
                  if (crashed.has(id)) return
                  sends.toAll++
                  for (const to of ids) if (to !== id) deliver(to, bytes)
                }
              }
            : {}),
          setTimer: (afterMs, fire) => {
            let cancelled = false
            schedule(afterMs, () => {
              if (!crashed.has(id) && !cancelled) fire()
            })
            return () => {
              cancelled = true
            }
          },
          ...(options.probe === true
            ? {
                probe: (peer: string, gone: () => void) => {
                  sends.probes++
                  schedule(2 * latencyMs, () => {
                    if (crashed.has(peer) && !crashed.has(id)) gone()
                  })
                }
              }
            : {}),
          nowMs: () => now,
          wallUs: () => now * 1000,
          emit: (event) => events.get(id)!.push(event)
        }
      )
    )
  }
  const runUntil = (done: () => boolean, limitMs = 10_000) => {
    while (!done() && queue.length > 0 && now < limitMs) {
      const next = queue.shift()!
      now = next.at
      next.run()
    }
  }
  /**
   * Stalls every engine for `forMs` from now: nothing runs until then (messages and timers that fell due
   * meanwhile run when it ends, in their order), like a machine whose processes were all paused.
   */
  const stall = (forMs: number) => {
    for (const item of queue.splice(0)) queue.push(item.at < now + forMs ? { ...item, at: now + forMs } : item)
    queue.sort((a, b) => a.at - b.at || a.seq - b.seq)
  }
  const delivered = (id: string) =>
    events
      .get(id)!
      .flatMap((e) => (e._tag === "Decided" ? e.values.map((v) => new TextDecoder().decode(v.payload)) : []))
  const runFor = (ms: number) => {
    const until = now + ms
    while (queue.length > 0 && queue[0]!.at <= until) {
      const next = queue.shift()!
      now = next.at
      next.run()
    }
    now = until
  }
  return {
    ids,
    loops,
    events,
    runUntil,
    runFor,
    stall,
    crash: (id: string) => crashed.add(id),
    delivered,
    sends,
    now: () => now
  }
}

describe("engine loop", () => {
  it("three engines deliver every broadcast in the same order, two rounds per instance", () => {
    const c = cluster(3)
    let requestId = 0
    for (const id of c.ids) {
      for (let i = 0; i < 5; i++) {
        c.loops
          .get(id)!
          .onCommand({ _tag: "Broadcast", requestId: requestId++, payload: new TextEncoder().encode(`${id}-${i}`) })
      }
    }
    c.runUntil(() => c.ids.every((id) => c.delivered(id).length === 15))
    const first = c.delivered("r1")
    expect(first).toHaveLength(15)
    for (const id of c.ids) expect(c.delivered(id)).toEqual(first)
    const decided = c.events.get("r1")!.filter((e) => e._tag === "Decided")
    expect(decided.every((e) => e._tag === "Decided" && e.rounds === 2)).toBe(true)
    const queued = c.events.get("r2")!.filter((e) => e._tag === "Queued")
    expect(queued).toHaveLength(5)
  })

  it("drops and counts malformed wire bytes without disturbing consensus", () => {
    const c = cluster(3)
    const r1 = c.loops.get("r1")!
    r1.onWire(new Uint8Array([0xde, 0xad, 0xbe, 0xef]))
    r1.onCommand({ _tag: "Broadcast", requestId: 1, payload: new TextEncoder().encode("x") })
    c.runUntil(() => c.ids.every((id) => c.delivered(id).length === 1))
    expect(c.events.get("r1")!.filter((e) => e._tag === "Dropped")).toHaveLength(1)
    r1.onCommand({ _tag: "ReportStats" })
    const stats = c.events.get("r1")!.find((e) => e._tag === "Stats")
    expect(stats?._tag === "Stats" && stats.stats.dropped).toBe(1)
    expect(c.delivered("r3")).toEqual(["x"])
  })

  it("with rounds closed on all heard, an instance takes two message delays, and round messages go out as one group send", () => {
    const c = cluster(3, { latencyMs: 1, closeOnAllHeard: true, groupSend: true })
    const r1 = c.loops.get("r1")!
    r1.onCommand({ _tag: "Broadcast", requestId: 1, payload: new TextEncoder().encode("a") })
    c.runUntil(() => c.ids.every((id) => c.delivered(id).length === 1))
    const bootstrapped = c.now()
    r1.onCommand({ _tag: "Broadcast", requestId: 2, payload: new TextEncoder().encode("b") })
    c.runUntil(() => c.ids.every((id) => c.delivered(id).length === 2))
    // The broadcast ends the idle gap at r1, whose round-1 message opens the instance at its peers (1 ms);
    // their round-1 messages, then everyone's round-2 messages, take 1 ms each. Timed rounds: 2 × 6.1 ms.
    expect(c.now() - bootstrapped).toBeLessThanOrEqual(3)
    for (const id of c.ids) expect(c.delivered(id)).toEqual(["a", "b"])
    // Only sync-start's point-to-point messages went one by one; every round message was one group send.
    expect(c.sends.toAll).toBeGreaterThan(0)
    expect(c.sends.toOne).toBeLessThanOrEqual(c.ids.length)
  })

  it("a stall of the whole group longer than a round period makes no engine suspect its peers", () => {
    const c = cluster(3, { latencyMs: 1, closeOnAllHeard: true, groupSend: true })
    let requestId = 0
    const broadcastEverywhere = () => {
      for (const id of c.ids) {
        c.loops
          .get(id)!
          .onCommand({ _tag: "Broadcast", requestId: requestId++, payload: new TextEncoder().encode(`${requestId}`) })
      }
    }
    broadcastEverywhere()
    c.runUntil(() => c.ids.every((id) => c.delivered(id).length === 3))
    // Stalls of 20 ms (round period 6.1 ms) landing at every point of an instance: 0.25 ms apart.
    for (let k = 1; k <= 40; k++) {
      broadcastEverywhere()
      c.runFor((k % 16) * 0.25)
      c.stall(20)
      c.runUntil(() => c.ids.every((id) => c.delivered(id).length === 3 * (k + 1)))
    }
    for (const id of c.ids) {
      expect(c.events.get(id)!.filter((e) => e._tag === "Crashed")).toEqual([])
      expect(c.delivered(id)).toEqual(c.delivered("r1"))
    }
    expect(c.delivered("r1")).toHaveLength(3 * 41)
  })

  it("a crashed peer is still suspected at its round's timer: the stall grace is only for a thread that heard nothing", () => {
    const c = cluster(3, { latencyMs: 1, closeOnAllHeard: true, groupSend: true })
    const r1 = c.loops.get("r1")!
    r1.onCommand({ _tag: "Broadcast", requestId: 1, payload: new TextEncoder().encode("a") })
    c.runUntil(() => c.ids.every((id) => c.delivered(id).length === 1))
    c.crash("r3")
    const crashedAt = c.now()
    r1.onCommand({ _tag: "Broadcast", requestId: 2, payload: new TextEncoder().encode("b") })
    c.runUntil(() => ["r1", "r2"].every((id) => c.delivered(id).length === 2))
    // Round 1 waits its timer (one round period, 6.1 ms) for r3, round 2 closes on the others' messages. With
    // the stall grace it would wait another period.
    expect(c.now() - crashedAt).toBeLessThan(2 * 6.1)
    for (const id of ["r1", "r2"]) {
      expect(c.delivered(id)).toEqual(["a", "b"])
      expect(c.events.get(id)!.filter((e) => e._tag === "Crashed")).toEqual([])
    }
  })

  it("a crashed peer the transport reports gone is not waited for: the round closes on the live peers", () => {
    const c = cluster(3, { latencyMs: 1, closeOnAllHeard: true, groupSend: true, probe: true })
    const r1 = c.loops.get("r1")!
    r1.onCommand({ _tag: "Broadcast", requestId: 1, payload: new TextEncoder().encode("a") })
    c.runUntil(() => c.ids.every((id) => c.delivered(id).length === 1))
    const stats = () => {
      r1.onCommand({ _tag: "ReportStats" })
      const last = c.events.get("r1")!.findLast((e) => e._tag === "Stats")
      return last?._tag === "Stats" ? last.stats : undefined
    }
    // Live peers answer within a round: no report, whatever was probed.
    expect(stats()?.goneReports).toBe(0)
    c.crash("r3")
    const crashedAt = c.now()
    r1.onCommand({ _tag: "Broadcast", requestId: 2, payload: new TextEncoder().encode("b") })
    c.runUntil(() => ["r1", "r2"].every((id) => c.delivered(id).length === 2))
    // Probe at ΔI/2 (1 ms), "gone" a round trip later, then round 2 on the live peers: well inside the round
    // period (6.1 ms) that round 1 waits for r3 without a probe (previous test).
    expect(c.now() - crashedAt).toBeLessThan(6.1)
    expect(stats()?.goneReports).toBeGreaterThan(0)
    // Later instances do not wait for r3 either, and nobody quit.
    r1.onCommand({ _tag: "Broadcast", requestId: 3, payload: new TextEncoder().encode("c") })
    const before = c.now()
    c.runUntil(() => ["r1", "r2"].every((id) => c.delivered(id).length === 3))
    expect(c.now() - before).toBeLessThan(6.1)
    for (const id of ["r1", "r2"]) {
      expect(c.delivered(id)).toEqual(["a", "b", "c"])
      expect(c.events.get(id)!.filter((e) => e._tag === "Crashed")).toEqual([])
    }
  })

  it("a Join replays the round messages kept while out, of its own attempt, and adopts a higher one", () => {
    const members = ["r1", "r2", "r3"]
    const joinAt5 = (attempt: number, sentAttempt: number) => {
      const loop = createEngineLoop(
        {
          group: "g",
          self: "r3",
          incarnation: "r3@1",
          members,
          roundTimer: makeRoundTimerConfig({ interactionMs: 2, driftMs: 0.1 }),
          maxBatchBytes: 64 * 1024
        },
        { send: () => {}, setTimer: () => undefined, nowMs: () => 0, wallUs: () => 0, emit: () => {} }
      )
      const value: Value = {
        proposer: "r1",
        incarnation: "r1@0",
        seq: 0,
        kind: "client",
        payload: new Uint8Array([1]),
        members: []
      }
      // r1's round-1 message of instance 5 reaches the engine before its host's Join: kept while out.
      const round1 = {
        _tag: "Round",
        instance: 5,
        attempt: sentAttempt,
        round: 1,
        values: [value],
        locked: [],
        decided: []
      } as const
      loop.onWire(encodeWire("g", "r1", round1, 0))
      loop.onCommand({
        _tag: "Join",
        startInstance: 5,
        attempt,
        decisions: [1, 2, 3, 4].map((instance) => ({ instance, values: [] })),
        schedule: initialSchedule(members),
        startNow: false
      })
      const current = loop.state().multi?.current
      return {
        round: current?.round,
        attempt: current?.attempt,
        heardR1: [...(current?.values.values() ?? [])].some((v) => v.proposer === "r1")
      }
    }
    // Replayed, r1's message opens round 1 with its value, in its attempt when that is higher.
    expect(joinAt5(0, 0)).toEqual({ round: 1, attempt: 0, heardR1: true })
    expect(joinAt5(1, 2)).toEqual({ round: 1, attempt: 2, heardR1: true })
    // A message of an aborted (lower) attempt is ignored: the engine still waits for the restart leader.
    expect(joinAt5(2, 1)).toEqual({ round: 0, attempt: 2, heardR1: false })
  })
})
