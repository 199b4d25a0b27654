/**
 * The actor table of `reef status` (and of `reef up`'s banner), from a membership view: one row per member
 * (joined, suspected, and recently left ones, marked as such), then, for each role that declares status
 * columns (roles/role.ts), a table of its members' role status. Pure: members and the time in, text or JSON out.
 */
import { ActorStatus, type Member, MemberState } from "@reef/proto/presence"
import type { Style } from "./cli/terminal.js"
import { naturalOrder } from "./natural-order.js"
import type { RoleStatusColumns } from "./roles/role.js"
import { formatTable } from "./table.js"

export const stateName = (s: MemberState): string =>
  MemberState[s]?.replace("MEMBER_STATE_", "").toLowerCase() ?? String(s)
export const statusName = (s: ActorStatus | undefined): string =>
  s === undefined ? "" : (ActorStatus[s]?.replace("ACTOR_STATUS_", "").toLowerCase() ?? String(s))

/** `r2` before `r10`. */

export const sortMembers = (members: ReadonlyArray<Member>): Array<Member> =>
  [...members].sort(
    (a, b) =>
      naturalOrder(a.address?.role ?? "", b.address?.role ?? "") ||
      naturalOrder(a.address?.id ?? "", b.address?.id ?? "")
  )

/** `0.3s ago`, `12s ago`, `4m ago`. */
export const ago = (ms: number): string => {
  const s = Math.max(0, ms) / 1000
  if (s < 10) return `${s.toFixed(1)}s ago`
  if (s < 120) return `${Math.round(s)}s ago`
  return `${Math.round(s / 60)}m ago`
}

const endpointsText = (member: Member): string =>
  Object.entries(member.lastHeartbeat?.endpoints ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, address]) => `${name}=${address}`)
    .join(" ")

const stateCell = (state: MemberState, style: Style): string => {
  const name = stateName(state)
  if (state === MemberState.MEMBER_STATE_JOINED) return style.good(name)
  if (state === MemberState.MEMBER_STATE_SUSPECTED) return style.warn(name)
  return style.dim(name)
}

/** The role-specific cells of every member of `role` (empty when the role declares no columns). */
/** What the status needs of a role: its name and its columns (a RoleSpec is one; so is roles/status-columns.ts). */
export interface StatusRole {
  readonly role: string
  readonly status?: RoleStatusColumns | undefined
}

const roleCells = (
  role: StatusRole | undefined,
  members: ReadonlyArray<Member>,
  nowMs: number,
  everyone: ReadonlyArray<Member>
) =>
  role?.status === undefined ? new Map<Member, ReadonlyArray<string>>() : role.status.cells(members, nowMs, everyone)

export interface StatusReport {
  readonly members: ReadonlyArray<Member>
  readonly nowMs: number
  readonly roles: ReadonlyArray<StatusRole>
}

const roleSections = ({ members, nowMs, roles }: StatusReport) => {
  const sections: Array<{
    role: StatusRole
    members: ReadonlyArray<Member>
    cells: ReadonlyMap<Member, ReadonlyArray<string>>
  }> = []
  for (const role of roles) {
    if (role.status === undefined) continue
    const ofRole = sortMembers(members.filter((m) => m.address?.role === role.role))
    if (ofRole.length > 0) sections.push({ role, members: ofRole, cells: roleCells(role, ofRole, nowMs, members) })
  }
  return sections
}

/** `16 actors via gateway 127.0.0.1:50051: 16 joined, 0 suspected, 0 recently left`. */
export const statusSummary = (members: ReadonlyArray<Member>, gateway: string): string => {
  const count = (state: MemberState) => members.filter((m) => m.state === state).length
  return (
    `${members.length} actors via gateway ${gateway}: ${count(MemberState.MEMBER_STATE_JOINED)} joined, ` +
    `${count(MemberState.MEMBER_STATE_SUSPECTED)} suspected, ${count(MemberState.MEMBER_STATE_LEFT)} recently left`
  )
}

/** Plain-text tables (colour through `style`, which is plain when output is not a terminal). */
export const statusText = (report: StatusReport, style: Style): string => {
  const members = sortMembers(report.members)
  if (members.length === 0) return "no actors in this cluster yet"
  // Colour codes would break column widths: colour each cell after padding.
  const table = formatTable(
    ["role", "id", "state", "status", "pid", "handled", "errored", "mailbox", "restarts", "seen", "endpoints"],
    members.map((m) => [
      m.address?.role ?? "",
      m.address?.id ?? "",
      stateName(m.state),
      statusName(m.lastHeartbeat?.status),
      m.lastHeartbeat?.pid ?? "",
      m.lastHeartbeat?.handled ?? 0,
      m.lastHeartbeat?.errored ?? 0,
      m.lastHeartbeat?.mailboxDepth ?? 0,
      m.lastHeartbeat?.restarts ?? 0,
      ago(report.nowMs - m.lastSeenMs),
      endpointsText(m)
    ])
  )
  const lines = table.split("\n")
  const coloured = [
    style.heading(lines[0]!),
    style.dim(lines[1]!),
    ...lines.slice(2).map((line, i) => {
      const member = members[i]!
      const name = stateName(member.state)
      const at = line.indexOf(` ${name} `) + 1
      return at > 0 ? `${line.slice(0, at)}${stateCell(member.state, style)}${line.slice(at + name.length)}` : line
    })
  ]
  const sections = roleSections(report).map(({ role, members: ofRole, cells }) => {
    const t = formatTable(
      ["id", ...role.status!.headers],
      ofRole.map((m) => [m.address?.id ?? "", ...(cells.get(m) ?? [])])
    ).split("\n")
    return [`\n${style.strong(role.role)}`, style.heading(t[0]!), style.dim(t[1]!), ...t.slice(2)].join("\n")
  })
  return [...coloured, ...sections].join("\n")
}

/**
 * A role-status value or column cell as JSON: heartbeats carry text, but `"12"` is the number 12 to a script,
 * and `-` (nothing to show) is null; anything else (`kv`, `0/4`, `3 (rejoining)`) stays text.
 */
export const jsonValue = (text: string): string | number | null =>
  text === "-" ? null : /^-?\d+(\.\d+)?$/.test(text) && Number.isFinite(Number(text)) ? Number(text) : text

const jsonValues = (entries: Iterable<readonly [string, string]>) =>
  Object.fromEntries([...entries].map(([k, v]) => [k, jsonValue(v)]))

/** The JSON form: every member with its heartbeat's numbers, endpoints, role status and role columns. */
export const statusJson = (report: StatusReport) => {
  const columns = new Map<Member, Record<string, string | number | null>>()
  for (const { role, cells } of roleSections(report)) {
    for (const [member, row] of cells) {
      columns.set(member, jsonValues(role.status!.headers.map((h, i) => [h, row[i] ?? ""] as const)))
    }
  }
  return {
    members: sortMembers(report.members).map((m) => {
      const h = m.lastHeartbeat
      return {
        role: m.address?.role ?? "",
        id: m.address?.id ?? "",
        state: stateName(m.state),
        status: statusName(h?.status),
        pid: h?.pid ?? 0,
        incarnation: h?.incarnation ?? "",
        handled: h?.handled ?? 0,
        errored: h?.errored ?? 0,
        mailboxDepth: h?.mailboxDepth ?? 0,
        load: h?.load ?? 0,
        restarts: h?.restarts ?? 0,
        lastSeenMs: m.lastSeenMs,
        lastSeenAgoMs: Math.max(0, report.nowMs - m.lastSeenMs),
        endpoints: h?.endpoints ?? {},
        roleStatus: jsonValues(Object.entries(h?.roleStatus ?? {})),
        ...(columns.has(m) ? { columns: columns.get(m) } : {})
      }
    })
  }
}
