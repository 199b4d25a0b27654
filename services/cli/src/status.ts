/** `reef status`: the actor table, read over gRPC from the gateway (ListActors). */
import { listActors } from "@reef/gateway"
import { ActorStatus, type Member, MemberState } from "@reef/proto"
import * as Effect from "effect/Effect"
import { formatTable } from "./table.js"

const stateName = (s: MemberState) => MemberState[s]?.replace("MEMBER_STATE_", "").toLowerCase() ?? String(s)
const statusName = (s: ActorStatus | undefined) =>
  s === undefined ? "" : (ActorStatus[s]?.replace("ACTOR_STATUS_", "").toLowerCase() ?? String(s))

export const membersTable = (members: ReadonlyArray<Member>): string =>
  formatTable(
    ["role", "id", "state", "status", "pid", "handled", "errored", "mailbox", "restarts", "last seen"],
    [...members]
      .sort((a, b) => `${a.address?.role}/${a.address?.id}`.localeCompare(`${b.address?.role}/${b.address?.id}`))
      .map((m) => [
        m.address?.role ?? "",
        m.address?.id ?? "",
        stateName(m.state),
        statusName(m.lastHeartbeat?.status),
        m.lastHeartbeat?.pid ?? "",
        m.lastHeartbeat?.handled ?? 0,
        m.lastHeartbeat?.errored ?? 0,
        m.lastHeartbeat?.mailboxDepth ?? 0,
        m.lastHeartbeat?.restarts ?? 0,
        new Date(m.lastSeenMs).toISOString()
      ])
  )

export const printMembers = (members: ReadonlyArray<Member>) => Effect.sync(() => console.log(membersTable(members)))

export const printStatus = (gateway: string, role: string | undefined) =>
  Effect.flatMap(listActors(gateway, role), printMembers)
