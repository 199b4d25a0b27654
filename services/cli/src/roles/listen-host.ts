/**
 * `--host` of a role with a gRPC port: the address it listens on and is announced with. Loopback by default, so
 * a role started without it serves this machine only; on a cluster of machines it is the machine's own address
 * (docs/deploy.md), which clients on the other machines dial and which presence hands out.
 */
import { Opt } from "../cli/spec.js"

export const listenHostOption = (port: string) =>
  Opt.text({
    description: `address ${port} listens on and is announced with (this machine's, for clients on others)`,
    placeholder: "HOST",
    default: "127.0.0.1"
  })
