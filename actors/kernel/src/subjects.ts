/**
 * The NATS subject scheme of Reef (documented in ARCHITECTURE.md). Pure: no I/O.
 *
 *   reef.<cluster>.<role>.<id>            one actor (direct tell/ask)
 *   reef.<cluster>.<role>.any             any one instance of a role (NATS queue group `reef.<role>`)
 *   reef.<cluster>.<role>.all             every instance of a role (broadcast)
 *   reef.<cluster>.$presence.<role>.<id>  heartbeats
 *
 * Tokens may not contain `.`, `*`, `>` or whitespace; `any`, `all` are reserved ids and `$presence` is not a role.
 */
import type { ActorAddress } from "@reef/proto"

export const SUBJECT_ROOT = "reef"
export const ANY_ID = "any"
export const ALL_ID = "all"
export const PRESENCE_TOKEN = "$presence"

const TOKEN = /^[A-Za-z0-9_\-$]+$/

/** True when `token` can be one token of a NATS subject under the Reef scheme. */
export const isValidToken = (token: string): boolean => TOKEN.test(token) && token.length <= 64

const tokenProblem = (field: string, value: string): string | undefined =>
  isValidToken(value) ? undefined : `${field} "${value}" must match ${TOKEN.source} (at most 64 characters)`

/** The reason an address cannot be used, or undefined when it is valid. Allocates nothing for a valid one: asks check. */
export const addressProblem = (address: ActorAddress): string | undefined => {
  const problem =
    tokenProblem("cluster", address.cluster) ?? tokenProblem("role", address.role) ?? tokenProblem("id", address.id)
  if (problem !== undefined) return problem
  if (address.id === ANY_ID || address.id === ALL_ID) return `id "${address.id}" is reserved`
  if (address.role === PRESENCE_TOKEN) return `role "${PRESENCE_TOKEN}" is reserved`
  return undefined
}

export const actorSubject = (address: ActorAddress): string =>
  `${SUBJECT_ROOT}.${address.cluster}.${address.role}.${address.id}`

export const anyInstanceSubject = (cluster: string, role: string): string =>
  `${SUBJECT_ROOT}.${cluster}.${role}.${ANY_ID}`

export const broadcastSubject = (cluster: string, role: string): string =>
  `${SUBJECT_ROOT}.${cluster}.${role}.${ALL_ID}`

/** Queue group shared by all instances of a role, so `any` delivers to exactly one of them. */
export const roleQueueGroup = (role: string): string => `reef-${role}`

export const presenceSubject = (address: ActorAddress): string =>
  `${SUBJECT_ROOT}.${address.cluster}.${PRESENCE_TOKEN}.${address.role}.${address.id}`

export const presenceWildcard = (cluster: string): string => `${SUBJECT_ROOT}.${cluster}.${PRESENCE_TOKEN}.>`

/** "role/id", the short human form used in logs and error details. */
export const formatAddress = (address: ActorAddress): string => `${address.role}/${address.id}`

/**
 * NATS subject matching with `*` (one token) and `>` (one or more trailing tokens), used by the in-memory bus.
 */
export const subjectMatches = (pattern: string, subject: string): boolean => {
  const p = pattern.split(".")
  const s = subject.split(".")
  for (let i = 0; i < p.length; i++) {
    if (p[i] === ">") return s.length > i
    if (i >= s.length) return false
    if (p[i] !== "*" && p[i] !== s[i]) return false
  }
  return p.length === s.length
}
