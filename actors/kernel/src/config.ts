/** Kernel settings shared by every actor of a process. Each has a limit or a bound, on purpose. */
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import { DEFAULT_MAX_PAYLOAD_BYTES } from "./codec.js"
import type { MembershipConfig } from "./membership-view.js"

export interface KernelConfigShape {
  readonly cluster: string
  /** Largest payload sent or accepted; larger ones fail with OversizedMessageError. */
  readonly maxPayloadBytes: number
  readonly askTimeoutMs: number
  readonly heartbeatIntervalMs: number
  readonly membership: MembershipConfig
  /** Reported in heartbeats and `$SRV.INFO` (semver). */
  readonly version: string
  /** How long a stopping actor may spend handling what is already in its mailbox. */
  readonly drainTimeoutMs: number
}

export const defaultKernelConfig: KernelConfigShape = {
  cluster: "local",
  maxPayloadBytes: DEFAULT_MAX_PAYLOAD_BYTES,
  askTimeoutMs: 5_000,
  heartbeatIntervalMs: 500,
  membership: { suspectAfterMs: 1_500, leftAfterMs: 5_000, forgetAfterMs: 60_000 },
  version: "0.1.0",
  drainTimeoutMs: 5_000
}

export class KernelConfig extends Context.Tag("@reef/kernel/KernelConfig")<KernelConfig, KernelConfigShape>() {}

export const kernelConfigLayer = (overrides: Partial<KernelConfigShape> = {}): Layer.Layer<KernelConfig> =>
  Layer.succeed(KernelConfig, {
    ...defaultKernelConfig,
    ...overrides,
    membership: { ...defaultKernelConfig.membership, ...overrides.membership }
  })
