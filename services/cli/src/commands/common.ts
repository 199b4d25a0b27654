/**
 * Options shared by several commands: how an actor process joins a cluster (`reef run`), and how a client
 * finds one (`reef status`, `reef kv ...`). Their defaults come from the cluster file of a running `reef up`.
 */
import { integerIn, Opt, ok } from "../cli/spec.js"

export const DEFAULT_NATS_URL = "nats://127.0.0.1:4222"
export const DEFAULT_CLUSTER = "local"
export const DEFAULT_GATEWAY = "127.0.0.1:50051"

export const clusterFileOption = Opt.text({
  description: "the cluster file reef up writes",
  placeholder: "PATH",
  defaultText: "$REEF_CLUSTER_FILE, else the nearest .reef/cluster.json"
})

/** `reef run <role>`: how the actor joins the cluster. */
export const runCommonOptions = {
  id: Opt.token({ description: "actor id, unique within its role", defaultText: "<role>-<pid>" }),
  nats: Opt.natsUrl({
    description: "NATS server the cluster runs on",
    defaultText: `the cluster file's, else ${DEFAULT_NATS_URL}`
  }),
  cluster: Opt.token({
    description: "cluster name (subjects reef.<cluster>.*)",
    defaultText: `the cluster file's, else ${DEFAULT_CLUSTER}`
  }),
  "cluster-file": clusterFileOption,
  creds: Opt.text({
    description: "nkey seed file this process connects to NATS with",
    placeholder: "FILE",
    defaultText: "the role's in the cluster file's credentials (reef up --secure), else none"
  }),
  "metrics-port": Opt.of<number | "off">({
    description: "port of this process's Prometheus /metrics endpoint (0: a free one; off: none)",
    placeholder: "PORT|off",
    default: 0,
    parse: (raw) => (raw === "off" ? ok("off" as const) : integerIn(0, 65535, "a port or off")(raw))
  }),
  "metrics-host": Opt.text({
    description:
      "address the /metrics endpoint listens on and is announced with (this machine's, for a remote Prometheus)",
    placeholder: "HOST",
    default: "127.0.0.1"
  })
}

/** Client commands: where the gateway is, and how to print. */
export const clientOptions = {
  gateway: Opt.address({
    description: "the gateway's gRPC address",
    defaultText: `the cluster file's, else ${DEFAULT_GATEWAY}`
  }),
  "cluster-file": clusterFileOption,
  output: Opt.choice({ description: "output format", choices: ["text", "json"], default: "text", short: "o" }),
  json: Opt.flag({ description: "same as -o json" }),
  timeout: Opt.integer({ description: "deadline of each call in ms", placeholder: "MS", default: 10_000, min: 1 })
}
