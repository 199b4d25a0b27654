/**
 * The layers a Reef process needs, composed once: configuration, a Bus (real NATS or in-memory), the
 * Messenger and the Membership view. Roles add their own services on top.
 */
import * as Layer from "effect/Layer"
import type { Bus } from "./bus.js"
import { memoryBusLayer } from "./bus-memory.js"
import { type Nats, type NatsOptions, natsLayer } from "./bus-nats.js"
import type { KernelConfig, KernelConfigShape } from "./config.js"
import { kernelConfigLayer } from "./config.js"
import type { BusError } from "./errors.js"
import { type Membership, membershipLayer } from "./membership.js"
import { type Messenger, messengerLayer } from "./messenger.js"
import { type PresenceDetails, presenceDetailsLayer } from "./presence-details.js"

export type Kernel = KernelConfig | Bus | Messenger | Membership | PresenceDetails

const onBus = <E, R>(bus: Layer.Layer<Bus | R, E, KernelConfig>, config: Partial<KernelConfigShape>) =>
  Layer.mergeAll(messengerLayer, membershipLayer, presenceDetailsLayer).pipe(
    Layer.provideMerge(bus),
    Layer.provideMerge(kernelConfigLayer(config))
  )

/** A kernel on a real NATS connection (reconnecting forever). */
export const natsKernelLayer = (
  nats: NatsOptions,
  config: Partial<KernelConfigShape> = {}
): Layer.Layer<Kernel | Nats, BusError> => onBus(natsLayer(nats), config)

/** A kernel on an in-memory bus: deterministic, no server, follows TestClock. */
export const memoryKernelLayer = (config: Partial<KernelConfigShape> = {}): Layer.Layer<Kernel> =>
  onBus(memoryBusLayer, config)
