import { ActorStatus, type Member, MemberState } from "@reef/proto"
import { describe, expect, it } from "vitest"
import { makeStyle } from "./cli/terminal.js"
import { prometheusTargets, targetsPathFor } from "./prometheus-targets.js"
import { roles } from "./roles/index.js"
import { backupColumns, ROLE_STATUS_COLUMNS, replicaLag } from "./roles/status-columns.js"
import { ago, jsonValue, statusJson, statusText } from "./status-view.js"

const member = (
  role: string,
  id: string,
  state: MemberState,
  lastSeenMs: number,
  roleStatus: Record<string, string> = {},
  endpoints: Record<string, string> = {}
): Member => ({
  address: { cluster: "local", role, id },
  state,
  lastSeenMs,
  lastHeartbeat: {
    address: { cluster: "local", role, id },
    load: 0,
    version: "0.1.0",
    status: ActorStatus.ACTOR_STATUS_RUNNING,
    incarnation: `${id}-1`,
    handled: 5,
    errored: 0,
    mailboxDepth: 0,
    restarts: 0,
    leaving: false,
    pid: 100,
    endpoints,
    roleStatus
  }
})
const joined = MemberState.MEMBER_STATE_JOINED
const replica = (id: string, applied: number, rate: number, seenMs: number, group = "kv", state = joined) =>
  member("replica", id, state, seenMs, { group, applied: String(applied), "instances/s": String(rate) })

describe("a replica's lag", () => {
  it("compares replicas of one group at one moment, each projected at its own rate", () => {
    // r2's heartbeat is 500 ms older: at 100 instances/s it was 50 behind then, which is no lag.
    const members = [replica("r1", 1000, 100, 10_000), replica("r2", 950, 100, 9_500), replica("r3", 900, 100, 10_000)]
    const lag = replicaLag(members)
    expect(members.map((m) => lag.get(m))).toEqual([0, 0, 100])
  })

  it("keeps groups apart and gives members that are not joined no lag", () => {
    const members = [
      replica("r1", 10, 0, 1_000),
      replica("q1", 5_000, 0, 1_000, "kv2"),
      replica("r2", 4, 0, 1_000, "kv", MemberState.MEMBER_STATE_SUSPECTED)
    ]
    const lag = replicaLag(members)
    expect(members.map((m) => lag.get(m))).toEqual([0, 0, undefined])
  })
})

describe("the status table", () => {
  const nowMs = 20_000
  const members = [
    member("counter", "c10", joined, 19_900, {}, { metrics: "http://127.0.0.1:9466/metrics" }),
    member("counter", "c2", MemberState.MEMBER_STATE_LEFT, 2_000),
    replica("r1", 1000, 100, 19_800),
    replica("r2", 990, 100, 19_800)
  ]

  it("lists every member (left ones as such, in natural order) and each role's own columns", () => {
    const text = statusText({ members, nowMs, roles }, makeStyle(false))
    const lines = text.split("\n")
    expect(lines[0]).toMatch(/^role\s+id\s+state\s+status\s+pid/)
    expect(lines[2]).toMatch(/^counter\s+c2\s+left\s+running\s+100\s+5\s+0\s+0\s+0\s+18s ago/)
    expect(lines[3]).toMatch(/^counter\s+c10\s+joined\s+.*metrics=http:\/\/127\.0\.0\.1:9466\/metrics$/)
    expect(text).toMatch(/\nreplica\nid\s+group\s+applied\s+rounds\/s\s+self-quits\s+lag\n/)
    expect(text).toMatch(/\nr2\s+kv\s+990\s+-\s+-\s+10/)
  })

  it("gives scripts every field, role columns included", () => {
    const json = statusJson({ members, nowMs, roles })
    expect(json.members.map((m) => `${m.role}/${m.id} ${m.state}`)).toEqual([
      "counter/c2 left",
      "counter/c10 joined",
      "replica/r1 joined",
      "replica/r2 joined"
    ])
    // Numbers as numbers (heartbeats carry text), `-` as null, other text as it is.
    expect(json.members[3]).toMatchObject({
      lastSeenAgoMs: 200,
      roleStatus: { applied: 990, group: "kv" },
      columns: { group: "kv", applied: 990, "rounds/s": null, lag: 10 }
    })
    expect([jsonValue("12"), jsonValue("0.5"), jsonValue("-3"), jsonValue("0/4"), jsonValue("3 (rejoining)")]).toEqual([
      12,
      0.5,
      -3,
      "0/4",
      "3 (rejoining)"
    ])
  })

  it("shows a backup that left as left, not as following at lag 0", () => {
    const beat = (id: string, state: MemberState) =>
      member("backup", id, state, 19_000, { chain: "ira", head: "40", lag: "0", "blocks/s": "2.0", state: "following" })
    const live = beat("b1", joined)
    const stopped = beat("b2", MemberState.MEMBER_STATE_LEFT)
    const cells = backupColumns.cells([live, stopped], nowMs, [live, stopped])
    expect(cells.get(live)).toEqual(["ira", "40", "0", "2.0", "following"])
    expect(cells.get(stopped)).toEqual(["ira", "40", "-", "-", "left"])
  })

  it("shows each worker's part in its coordinator's pool, for the incarnation the coordinator means", () => {
    const worker = (id: string) =>
      member("worker", id, joined, 19_000, { executed: "5", objects: "2", coordinator: "x1" })
    const [w1, w2, w3] = [worker("w1"), worker("w2"), worker("w3")]
    const x1 = member("coordinator", "x1", joined, 19_000, {
      "pool w1@w1-1": "active 1200µs",
      "pool w2@w2-1": "spare",
      // An earlier process of w3: its part is not this one's.
      "pool w3@w3-0": "retiring 0µs"
    })
    const cells = ROLE_STATUS_COLUMNS.worker.cells([w1!, w2!, w3!], nowMs, [x1, w1!, w2!, w3!])
    expect(ROLE_STATUS_COLUMNS.worker.headers.at(-1)).toBe("pool")
    expect([w1!, w2!, w3!].map((w) => cells.get(w)?.at(-1))).toEqual(["active 1200µs", "spare", "-"])
    expect(cells.get(w1!)?.slice(0, 2)).toEqual(["5", "2"])
  })

  it("writes one Prometheus target per process that announces /metrics", () => {
    expect(prometheusTargets(members, "local")).toEqual([
      { targets: ["127.0.0.1:9466"], labels: { cluster: "local", role: "counter", id: "c10" } }
    ])
    // Next to the cluster file, never the cluster file itself (`--cluster-file my-cluster.json` overwrote it).
    expect(targetsPathFor("/p/.reef/cluster.json")).toBe("/p/.reef/prometheus-targets.json")
    expect(targetsPathFor("/p/my-cluster.json")).toBe("/p/my-cluster.prometheus-targets.json")
    expect(targetsPathFor("/p/my.json")).toBe("/p/my.prometheus-targets.json")
    expect(targetsPathFor("/p/cluster")).toBe("/p/cluster.prometheus-targets.json")
    expect(ago(250)).toBe("0.3s ago")
    expect(ago(90_000)).toBe("90s ago")
  })
})
