/**
 * The RESP server's backend over Reef's own KV state: writes go through the replica's proposer as
 * `RedisCommand`s (applied by redis-commands.ts on every replica, in the log's order), reads wait for the
 * proposer's read barrier and then read this replica's state, exactly as the gRPC KV's Set and Get do.
 */
import { HandlerError } from "@reef/kernel"
import { ErrorCode } from "@reef/proto"
import type { Proposer } from "./proposer.js"
import { checkCommand, KV_COMMANDS, readRedis, upper } from "./redis-commands.js"
import type { ReplicaState } from "./replica-state.js"
import type { RespBackend } from "./resp-server.js"
import { err, error, type RespValue } from "./resp-value.js"

/** A replica's refusal as a Redis error: LOADING while it joins (clients retry that), else TRYAGAIN or ERR. */
export const respErrorOf = (failure: HandlerError, serving: boolean): RespValue => {
  if (failure.code === ErrorCode.ERROR_CODE_UNAVAILABLE) {
    return serving ? error("TRYAGAIN", failure.message) : error("LOADING", failure.message)
  }
  if (failure.code === ErrorCode.ERROR_CODE_OVERLOADED) return error("TRYAGAIN", failure.message)
  return err(failure.message)
}

/** The command as proposed: its name upper-cased, so every replica reads it the same way. */
export const proposedArgs = (args: ReadonlyArray<Uint8Array>): Array<Buffer> => [
  Buffer.from(upper(args[0]!), "latin1"),
  ...args.slice(1).map((arg) => (Buffer.isBuffer(arg) ? arg : Buffer.from(arg)))
]

export const kvBackend = <Span>(deps: {
  readonly state: ReplicaState
  readonly proposer: Proposer<Span>
  readonly limits: { readonly maxKeyBytes: number; readonly maxValueBytes: number }
  /** The engines deciding in parallel (--engines): with more than one, a replica's values may be reordered. */
  readonly engines: number
}): RespBackend => ({
  describe: "reef-kv",
  writesInOrder: deps.engines === 1,
  commands: KV_COMMANDS,
  check: (args) => checkCommand(args, deps.limits),
  write: (args, done) => {
    deps.proposer.submit({ $case: "redis", value: { args: proposedArgs(args) } }, (outcome) => {
      if (outcome instanceof HandlerError) done(respErrorOf(outcome, deps.proposer.isServing))
      else
        done(outcome.result._tag === "Redis" ? outcome.result.reply : err(`unexpected result ${outcome.result._tag}`))
    })
  },
  read: (args, done) => {
    deps.proposer.awaitReadPoint((point) => {
      if (point instanceof HandlerError) done(respErrorOf(point, deps.proposer.isServing))
      else done(readRedis(deps.state.kv, args))
    })
  }
})
