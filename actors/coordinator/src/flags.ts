/**
 * `reef run coordinator` flags, parsed into options and a ConsensusSource layer. A bad value is an error that
 * names the flag and what it accepts, never a silent default.
 */
import { type Architecture, POLICIES, type PolicyName, type Separation, type Timing } from "@reef/remora"
import type * as Layer from "effect/Layer"
import type { ConsensusSource } from "./consensus-source.js"
import { popucConsensusLayer } from "./popuc-consensus.js"
import type { RunCoordinatorOptions } from "./run-coordinator.js"
import { DEFAULT_WINDOW_MS, windowConsensusLayer } from "./window-consensus.js"

export type Flags = Readonly<Record<string, string | undefined>>

export const COORDINATOR_FLAGS = `--execution-port N (gRPC reef.v1.Execution; 0: a free port)
  --consensus window|popuc  (default window)
  --window-ms MS --reject-rate R --reorder-rate R        (window)
  --popuc-replicas host:port,...                          (popuc: the replicas' reef.v1.KV addresses)
  --policy ${POLICIES.join("|")}  --architecture asymmetric|symmetric
  --separation coordinator|worker|none  --stateless pre|post  --scheduling pre|post
  --block-interval-ms MS  --max-block-txs N  --seed N  --symmetric-scheduling-us US`

export class FlagError extends Error {}

const oneOf = <T extends string>(flags: Flags, name: string, allowed: ReadonlyArray<T>): T | undefined => {
  const raw = flags[name]
  if (raw === undefined) return undefined
  if (!(allowed as ReadonlyArray<string>).includes(raw))
    throw new FlagError(`--${name} must be one of ${allowed.join(", ")}, got "${raw}"`)
  return raw as T
}

const number = (flags: Flags, name: string, min: number, max: number): number | undefined => {
  const raw = flags[name]
  if (raw === undefined) return undefined
  const n = Number(raw)
  if (!Number.isFinite(n) || n < min || n > max)
    throw new FlagError(`--${name} must be a number in ${min}..${max}, got "${raw}"`)
  return n
}

const timing = (flags: Flags, name: string): Timing | undefined => {
  const t = oneOf(flags, name, ["pre", "post"] as const)
  return t === undefined ? undefined : t === "pre" ? "pre-consensus" : "post-consensus"
}

export interface CoordinatorLaunch {
  readonly options: RunCoordinatorOptions
  readonly consensus: Layer.Layer<ConsensusSource>
  readonly consensusName: string
}

export const parseCoordinatorFlags = (id: string, cluster: string, flags: Flags): CoordinatorLaunch => {
  const policy = oneOf<PolicyName>(flags, "policy", POLICIES)
  const architecture = oneOf<Architecture>(flags, "architecture", ["asymmetric", "symmetric"])
  const separation = oneOf<Separation>(flags, "separation", ["coordinator", "worker", "none"])
  const statelessTiming = timing(flags, "stateless")
  const schedulingTiming = timing(flags, "scheduling")
  const seed = number(flags, "seed", 0, 2 ** 32 - 1)
  const symmetric = number(flags, "symmetric-scheduling-us", 0, 1_000_000)
  const blockIntervalMs = number(flags, "block-interval-ms", 1, 60_000)
  const maxBlockTxs = number(flags, "max-block-txs", 1, 100_000)
  const grpcPort = number(flags, "execution-port", 0, 65_535)
  const consensusName = oneOf(flags, "consensus", ["window", "popuc"] as const) ?? "window"
  let consensus: Layer.Layer<ConsensusSource>
  if (consensusName === "popuc") {
    const replicas = (flags["popuc-replicas"] ?? "").split(",").filter((r) => r !== "")
    if (replicas.length === 0) throw new FlagError("--consensus popuc needs --popuc-replicas host:port,...")
    consensus = popucConsensusLayer({ replicas, chain: `remora/${cluster}/${id}/${Date.now().toString(36)}` })
  } else {
    consensus = windowConsensusLayer({
      windowMs: number(flags, "window-ms", 0, 600_000) ?? DEFAULT_WINDOW_MS,
      rejectRate: number(flags, "reject-rate", 0, 1) ?? 0,
      reorderRate: number(flags, "reorder-rate", 0, 1) ?? 0,
      seed: seed ?? 1
    })
  }
  return {
    consensus,
    consensusName,
    options: {
      id,
      ...(grpcPort === undefined ? {} : { grpcPort }),
      ...(blockIntervalMs === undefined ? {} : { blockIntervalMs }),
      ...(maxBlockTxs === undefined ? {} : { maxBlockTxs }),
      params: {
        ...(policy === undefined ? {} : { policy }),
        ...(architecture === undefined ? {} : { architecture }),
        ...(separation === undefined ? {} : { separation }),
        ...(statelessTiming === undefined ? {} : { statelessTiming }),
        ...(schedulingTiming === undefined ? {} : { schedulingTiming }),
        ...(seed === undefined ? {} : { seed }),
        ...(symmetric === undefined ? {} : { symmetricSchedulingCostUs: symmetric })
      }
    }
  }
}
