/** `reef run gateway`: the cluster's gRPC front door (reef.v1.Cluster, health, reflection). */
import * as Effect from "effect/Effect"
import { Opt } from "../cli/spec.js"
import { defineRole } from "./role.js"

export const DEFAULT_GATEWAY_PORT = 50051

export const gatewayRole = defineRole({
  role: "gateway",
  summary: "gRPC gateway: reef.v1.Cluster (actors, membership, ping), health and reflection",
  description:
    "Serves the cluster's client API from its own membership view: `reef status`, `reef watch` and `reef ping` " +
    "talk to it. Joins the cluster as the actor gateway/<id> once its port is bound.",
  options: {
    "grpc-port": Opt.port({ description: "gRPC port (0: a free one)", default: DEFAULT_GATEWAY_PORT }),
    host: Opt.text({
      description: "address to listen on (0.0.0.0 accepts remote clients)",
      placeholder: "HOST",
      default: "127.0.0.1"
    })
  },
  examples: ["reef run gateway --id gw2 --grpc-port 50052"],
  start: (input, context) =>
    Effect.gen(function* () {
      const { runGateway } = yield* Effect.promise(() => import("@reef/gateway"))
      const server = yield* runGateway({ port: input["grpc-port"], host: input.host, id: context.id })
      return { description: `gateway ${context.id} on ${server.address}`, endpoints: { grpc: server.address } }
    }),
  up: {
    byDefault: true,
    options: {
      "grpc-port": Opt.port({ description: "the gateway's gRPC port", default: DEFAULT_GATEWAY_PORT })
    },
    plan: (input) => [{ role: "gateway", id: "gw1", args: [], ports: { "grpc-port": input["grpc-port"] } }]
  }
})
