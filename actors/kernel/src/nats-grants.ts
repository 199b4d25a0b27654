/**
 * What each identity may publish and subscribe to, from the subject scheme (ARCHITECTURE.md), as
 * nats-server 2.9 configuration: an `authorization` block of nkey users with permissions. The server enforces
 * it; Reef signs nothing of its own. Pure: plain data in, configuration text out.
 *
 * An identity (one per role, shared by the role's processes) may
 * - subscribe to its own actors' subjects, every heartbeat, NATS micro discovery and its own reply inboxes;
 * - publish its own actors' heartbeats, to the actors of the roles it talks to, and replies to what it was
 *   asked (`allow_responses`: a reply goes to the asker's inbox, whoever it is);
 * - take part in POPUC rounds, write or read JetStream, or publish discovery requests only when granted.
 * So a worker cannot publish a POPUC round or a replica's heartbeat, and a client cannot publish presence.
 */

export interface GrantSpec {
  /** The identity's name in the configuration (a comment; the server knows it by its public key). */
  readonly name: string
  /** The actor roles this identity's processes run (their subjects and heartbeats are its own). */
  readonly roles: ReadonlyArray<string>
  /** Roles whose actors it sends to (asks, tells, batches); `"*"` for any actor (gateways, clients). */
  readonly talksTo: ReadonlyArray<string>
  /** Takes part in POPUC replication groups (round, probe and calibration subjects). */
  readonly popuc?: boolean
  /** JetStream: "write" manages streams and publishes to `subjects`; "read" only reads (ordered consumers, KV get). */
  readonly jetstream?: "write" | "read"
  /** Subjects under `reef.<cluster>.` it publishes to besides actors (e.g. its JetStream streams'). */
  readonly clusterSubjects?: ReadonlyArray<string>
  /** Subjects outside the cluster's it publishes to (e.g. AirDB's segment streams, `airdb.<segment>`). */
  readonly subjects?: ReadonlyArray<string>
  /** Sends NATS micro discovery requests (`$SRV.>`). */
  readonly discovery?: boolean
}

export interface NatsGrant {
  readonly publish: ReadonlyArray<string>
  readonly subscribe: ReadonlyArray<string>
  /** Never allowed even when an allow pattern matches (the server applies deny first). */
  readonly denyPublish: ReadonlyArray<string>
}

/** Read-only JetStream API: stream and consumer info, consumers (ordered ones included), direct and KV gets. */
const JETSTREAM_READ = [
  "$JS.API.INFO",
  "$JS.API.STREAM.INFO.>",
  "$JS.API.STREAM.NAMES",
  "$JS.API.STREAM.MSG.GET.>",
  "$JS.API.DIRECT.GET.>",
  "$JS.API.CONSUMER.CREATE.>",
  "$JS.API.CONSUMER.INFO.>",
  "$JS.API.CONSUMER.DELETE.>",
  "$JS.API.CONSUMER.MSG.NEXT.>",
  "$JS.ACK.>",
  "$JS.FC.>"
]
const JETSTREAM_WRITE = ["$JS.API.>", "$JS.ACK.>", "$JS.FC.>", "$KV.>"]

/** The subjects of POPUC groups (actors/nic engine-subjects.ts). */
const popucSubjects = (cluster: string) =>
  ["popuc", "popuc-all", "popuc-probe", "popuc-calibration"].map((s) => `reef.${cluster}.${s}.>`)

/** The grant of `spec` in `cluster`, for the user whose replies come to `inboxPrefix` (nats-security.ts). */
export const grantFor = (cluster: string, spec: GrantSpec, inboxPrefix: string): NatsGrant => {
  const c = `reef.${cluster}`
  const own = spec.roles.map((r) => `${c}.${r}.*`)
  const anyActor = spec.talksTo.includes("*")
  const sendsTo = anyActor ? [`${c}.*.*`] : spec.talksTo.map((r) => `${c}.${r}.*`)
  const subjects = [...(spec.clusterSubjects ?? []).map((s) => `${c}.${s}`), ...(spec.subjects ?? [])]
  return {
    publish: [
      ...spec.roles.map((r) => `${c}.$presence.${r}.*`),
      ...own,
      ...sendsTo,
      ...(spec.popuc === true ? popucSubjects(cluster) : []),
      ...(spec.jetstream === "write" ? JETSTREAM_WRITE : spec.jetstream === "read" ? JETSTREAM_READ : []),
      ...(spec.discovery === true ? ["$SRV.>"] : []),
      ...subjects
    ],
    subscribe: [
      ...own,
      `${c}.$presence.>`,
      "$SRV.>",
      `${inboxPrefix}.>`,
      ...(spec.popuc === true ? popucSubjects(cluster) : [])
    ],
    // `reef.<cluster>.*.*` also matches a group's round subject for all peers (four tokens, like an actor's).
    denyPublish: anyActor && spec.popuc !== true ? [`${c}.popuc-all.*`, `${c}.popuc-calibration.*`] : []
  }
}

const quoted = (patterns: ReadonlyArray<string>) => `[${patterns.map((p) => JSON.stringify(p)).join(", ")}]`

/** One user of the `authorization` block. */
export const userConfig = (publicKey: string, name: string, grant: NatsGrant): string => {
  const deny = grant.denyPublish.length > 0 ? `, deny: ${quoted(grant.denyPublish)}` : ""
  return [
    `    # ${name}`,
    `    { nkey: ${JSON.stringify(publicKey)}, permissions: {`,
    `        publish: { allow: ${quoted(grant.publish)}${deny} }`,
    `        subscribe: { allow: ${quoted(grant.subscribe)} }`,
    "        allow_responses: true",
    "    } }"
  ].join("\n")
}

/** The `authorization` block for `users`: anyone else is refused at connect. */
export const authorizationConfig = (
  users: ReadonlyArray<{ readonly publicKey: string; readonly name: string; readonly grant: NatsGrant }>
): string =>
  `authorization {\n  users: [\n${users.map((u) => userConfig(u.publicKey, u.name, u.grant)).join("\n")}\n  ]\n}\n`
