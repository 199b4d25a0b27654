/**
 * Plain-data shapes shared by the POPUC cores. Everything here crosses a worker_thread boundary and is
 * encoded to protobuf by the shell, so it is data only: no classes, no functions, no Maps or Sets.
 */

/** A replica's identity. Ordered by plain code-unit comparison wherever an order is needed. */
export type ProcessId = string

/**
 * One process start of a replica: a random 64-bit nonce (16 hex digits) drawn when the process starts, so a
 * replica restarted under the same id is told apart from its previous life. Never key anything that belongs
 * to one process on its `ProcessId` alone.
 */
export type Incarnation = string

/**
 * What a proposed value carries:
 * - `client`: an application request (`payload`);
 * - `heartbeat`: the paper's □, proposed when nothing is pending so an idle replica is not suspected;
 * - `membership`: a command that replaces the member list (`members`), decided through consensus.
 */
export type ValueKind = "client" | "heartbeat" | "membership"

/**
 * One proposed value. Identity is `proposer` + `incarnation` + `seq` (heartbeats have a separate seq space:
 * their seq is the instance they were proposed in), which is how the paper's "proposed values are distinct"
 * holds across restarts too: a restarted process starts its seqs at 0 again, in a new incarnation.
 */
export interface Value {
  readonly proposer: ProcessId
  readonly incarnation: Incarnation
  readonly seq: number
  readonly kind: ValueKind
  /** Application bytes; empty for heartbeats and membership commands. */
  readonly payload: Uint8Array
  /** The new member list of a `membership` command; empty otherwise. */
  readonly members: ReadonlyArray<ProcessId>
}

/** A value's identity without its content. */
export type ValueRef = Pick<Value, "proposer" | "incarnation" | "seq" | "kind">

/** The message every process multi-sends in every round (Alg. 2: `send(r, V, locked)`), tagged with its instance. */
export interface RoundMsg {
  readonly _tag: "Round"
  readonly instance: number
  /**
   * Which attempt at `instance` the message belongs to (0, the first, when absent). A group that collapsed
   * (every member self-quit in an instance) opens the instance again in a higher attempt; rounds of two
   * attempts are never merged, so no process ever sends two different messages for one round of one attempt
   * (popuc-multi.ts, "Attempts").
   */
  readonly attempt?: number
  readonly round: number
  readonly values: ReadonlyArray<Value>
  readonly locked: ReadonlyArray<ProcessId>
  /**
   * Round 1 of an instance opened by a decision: the ids of the set the sender decided in the previous
   * instance (decision relay, see popuc-multi.ts). Empty otherwise.
   */
  readonly decided: ReadonlyArray<ValueRef>
  /** The attempt of the previous instance in which `decided` was decided (0 when absent). */
  readonly decidedAttempt?: number
}

/** The result of one transition: the new state and the work the shell must do, as data (etcd `Ready`). */
export interface Step<S, O> {
  readonly state: S
  readonly out: ReadonlyArray<O>
}
