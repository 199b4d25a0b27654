/**
 * "A replica that self-quits rejoins: it fetches the decisions or a state snapshot it missed from peers."
 * The snapshot path: replicas keep a tiny decision log (--log-bytes), a replica is killed, the others take
 * far more writes than that log holds, and the restarted replica must restore a peer's snapshot (moved in
 * chunks), then catch up on the decisions after it and end with the same state hash as the others.
 */
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { describe, expect, it } from "vitest"
import { eventually } from "./harness.js"
import { settledGroupHashes, useGroup, withGroupClients } from "./popuc-harness.js"

const fixture = useGroup({ n: 3, cluster: "popucsnap", extraArgs: ["--log-bytes", "4096"] })

describe("POPUC rejoin from a state snapshot", () => {
  it("a replica further behind than the peers' decision logs restores a snapshot and converges", async () => {
    const victim = fixture.group.processes.get("r3")!
    victim.child.kill("SIGKILL")
    await victim.exited
    // ~600 writes of 1 KiB: far more than a 4 KiB log, and more than one 256 KiB snapshot chunk.
    await Effect.runPromise(
      withGroupClients(fixture.group, 2, "colocated", (clients) =>
        Effect.forEach(
          Array.from({ length: 600 }, (_, i) => i),
          (i) => clients[i % 2]!.set(`snap-${i}`, Buffer.alloc(1024, i % 256)),
          { concurrency: 32, discard: true }
        )
      )
    )
    await fixture.group.start("r3")
    // The restarted process says it restored a snapshot (its stats, not its log).
    const restored = await Effect.runPromise(
      withGroupClients(fixture.group, 1, "colocated", (clients) =>
        eventually(clients[0]!.state(2).pipe(Effect.filterOrFail((s) => s.snapshotsRestored > 0)), 60)
      )
    )
    expect(restored.snapshotsRestored).toBeGreaterThan(0)
    // 600 KiB of state: the snapshot moved in more than one chunk (only its log line counts chunks).
    const lines = fixture.group.processes.get("r3")!.lines
    const restoredLine = lines.find((l) => l.includes("restored the state of"))!
    expect(Number(/(\d+) chunks/.exec(restoredLine)?.[1])).toBeGreaterThan(1)
    // It serves and applies new writes after the restore, and all three states are identical.
    await Effect.runPromise(
      withGroupClients(fixture.group, 3, "colocated", (clients) =>
        Effect.forEach(clients, (c, i) =>
          c
            .set(`after-restore-${i}`, Buffer.from("v"))
            .pipe(Effect.retry(Schedule.spaced("200 millis").pipe(Schedule.compose(Schedule.recurs(50)))))
        )
      )
    )
    const states = await Effect.runPromise(settledGroupHashes(fixture.group, fixture.group.ids))
    expect(new Set(states.map((s) => s.stateHash)).size).toBe(1)
    expect(states.every((s) => s.keys === 603)).toBe(true)
    const read = await Effect.runPromise(
      withGroupClients(fixture.group, 3, "colocated", (clients) => clients[2]!.get("snap-599"))
    )
    expect(Buffer.from(read.value)).toEqual(Buffer.alloc(1024, 599 % 256))
  }, 180_000)
})
