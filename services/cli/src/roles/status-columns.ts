/**
 * The `reef status` columns of every role, from the role status in its members' heartbeats, apart from the role
 * files (roles/*.ts) so that `reef status` renders them without loading what a role needs to run (Effect, the
 * role's packages): see fast-status.ts. A role's file points at its entry here.
 */
import { type Member, MemberState } from "@reef/proto/presence"
import { type RoleStatusColumns, roleStatusColumns } from "./role.js"

const number = (member: Member, key: string): number | undefined => {
  const raw = member.lastHeartbeat?.roleStatus[key]
  const n = raw === undefined ? Number.NaN : Number(raw)
  return Number.isFinite(n) ? n : undefined
}

/**
 * How many instances each joined replica is behind the most advanced replica of its group. Heartbeats are
 * read at different moments (up to a heartbeat interval apart) while the group keeps deciding, so each
 * replica's applied instance is first projected to a common moment at its own rate; what remains is lag.
 * Members that are not joined have no lag (`-`).
 */
export const replicaLag = (members: ReadonlyArray<Member>): ReadonlyMap<Member, number | undefined> => {
  const lag = new Map<Member, number | undefined>()
  const groups = new Map<string, Array<Member>>()
  for (const member of members) {
    const applied = number(member, "applied")
    if (member.state !== MemberState.MEMBER_STATE_JOINED || applied === undefined) {
      lag.set(member, undefined)
      continue
    }
    const group = member.lastHeartbeat?.roleStatus.group ?? ""
    groups.set(group, [...(groups.get(group) ?? []), member])
  }
  for (const group of groups.values()) {
    const at = Math.max(...group.map((m) => m.lastSeenMs))
    const projected = group.map(
      (m) => number(m, "applied")! + ((number(m, "instances/s") ?? 0) * (at - m.lastSeenMs)) / 1000
    )
    const head = Math.max(...projected)
    for (const [i, m] of group.entries()) lag.set(m, Math.max(0, Math.round(head - projected[i]!)))
  }
  return lag
}

const replicaColumns: RoleStatusColumns = {
  headers: ["group", "applied", "rounds/s", "self-quits", "lag"],
  cells: (members) => {
    const lag = replicaLag(members)
    return new Map(
      members.map((m) => {
        const status = m.lastHeartbeat?.roleStatus ?? {}
        const behind = lag.get(m)
        const cell = (key: string) => status[key] ?? "-"
        const lagCell =
          behind === undefined ? "-" : status.rejoining === "yes" ? `${behind} (rejoining)` : String(behind)
        return [m, [cell("group"), cell("applied"), cell("rounds/s"), cell("self-quits"), lagCell]]
      })
    )
  }
}

/**
 * A backup's replay, from its heartbeats. A backup that is no longer joined is not `following` at lag 0: its
 * last heartbeat says what it did then, so its state is its membership (`left`, `suspected`) and its lag and
 * rate are unknown (`-`); its head is the last one it reported.
 */
export const backupColumns: RoleStatusColumns = {
  headers: ["chain", "head", "lag", "blocks/s", "state"],
  cells: (members) =>
    new Map(
      members.map((m) => {
        const status = m.lastHeartbeat?.roleStatus ?? {}
        const cell = (key: string) => status[key] ?? "-"
        if (m.state !== MemberState.MEMBER_STATE_JOINED) {
          const state = MemberState[m.state]?.replace("MEMBER_STATE_", "").toLowerCase() ?? "-"
          return [m, [cell("chain"), cell("head"), "-", "-", state]]
        }
        return [m, [cell("chain"), cell("head"), cell("lag"), cell("blocks/s"), cell("state")]]
      })
    )
}

const airdbColumns: RoleStatusColumns = {
  // A store is its name on its storage: `airdb` on JetStream and `airdb` on Redis are two stores.
  headers: ["store", "storage", "entries", "chain end"],
  cells: (members) =>
    new Map(
      members.map((m) => {
        const s = m.lastHeartbeat?.roleStatus ?? {}
        return [m, [s.store ?? "-", s.backend ?? "-", s.entries ?? "-", s["chain end"] ?? "-"]]
      })
    )
}

/**
 * A worker's own counters, and its part in its coordinator's pool (active, retiring or spare, with the load the
 * coordinator placed on it): the coordinator's heartbeat says it per incarnation (`pool <id>@<incarnation>`), so
 * a restarted worker is not shown with its previous process's part.
 */
const WORKER_KEYS = ["executed", "objects", "leases in", "busy", "waiting"]
const workerColumns: RoleStatusColumns = {
  headers: [...WORKER_KEYS, "pool"],
  cells: (members, _nowMs, everyone) =>
    new Map(
      members.map((m) => {
        const status = m.lastHeartbeat?.roleStatus ?? {}
        const coordinator = everyone.find(
          (c) => c.address?.role === "coordinator" && c.address.id === status.coordinator
        )
        const part = coordinator?.lastHeartbeat?.roleStatus[`pool ${m.address?.id}@${m.lastHeartbeat?.incarnation}`]
        return [m, [...WORKER_KEYS.map((k) => status[k] ?? "-"), part ?? "-"]]
      })
    )
}

/** Each role's columns, by role (roles without columns have none). */
export const ROLE_STATUS_COLUMNS = {
  replica: replicaColumns,
  backup: backupColumns,
  airdb: airdbColumns,
  coordinator: roleStatusColumns([
    "consensus",
    "accepted",
    "committed",
    "completed",
    "blocks",
    "workers",
    "recoveries",
    "pool",
    "scale out/in"
  ]),
  worker: workerColumns
} as const satisfies Readonly<Record<string, RoleStatusColumns>>

/** The roles in the registry's order (roles/index.ts), with their columns: what `reef status` renders. */
export const STATUS_ROLES: ReadonlyArray<{ readonly role: string; readonly status?: RoleStatusColumns }> = [
  { role: "gateway" },
  { role: "counter" },
  { role: "replica", status: replicaColumns },
  { role: "chain" },
  { role: "backup", status: backupColumns },
  { role: "airdb", status: airdbColumns },
  { role: "coordinator", status: ROLE_STATUS_COLUMNS.coordinator },
  { role: "worker", status: ROLE_STATUS_COLUMNS.worker }
]
