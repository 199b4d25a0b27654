/**
 * `pnpm hosts:up [--hosts N] [--delay-ms D] [--jitter-ms J]`: a whole Reef cluster across N hosts of this
 * machine (hosts-up.ts; needs root), placed and announced host by host, until Ctrl-C. Then, from this machine:
 * `pnpm reef status --gateway <h1>:50051`, `pnpm reef kv put k v --gateway <h1>:50051`, and so on.
 */
import { hostsUnavailable } from "@reef/devkit/hosts"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { hostsUp, PORTS } from "./hosts-up.js"

const usage = "pnpm hosts:up [--hosts N (odd, 3..9)] [--delay-ms D] [--jitter-ms J]"
const args = process.argv.slice(2)
const option = (name: string, fallback: number) => {
  const at = args.indexOf(name)
  return at < 0 ? fallback : Number(args[at + 1])
}
const n = option("--hosts", 3)
const delayMs = option("--delay-ms", 0.5)
const jitterMs = option("--jitter-ms", delayMs / 10)
const known = new Set(["--hosts", "--delay-ms", "--jitter-ms"])
const unknown = args.filter((a, i) => a.startsWith("--") && !known.has(a) && i % 2 === 0)
if (
  unknown.length > 0 ||
  !Number.isInteger(n) ||
  n < 3 ||
  n > 9 ||
  n % 2 === 0 ||
  !(delayMs >= 0) ||
  !(jitterMs >= 0)
) {
  console.error(`usage: ${usage}`)
  process.exit(2)
}
const unavailable = hostsUnavailable()
if (unavailable !== undefined) {
  console.error(`hosts:up needs network namespaces: ${unavailable}`)
  process.exit(1)
}
const scope = Effect.runSync(Scope.make())
const up = await Effect.runPromise(
  hostsUp({ n, delayMs, jitterMs, say: (line) => console.log(line) }).pipe(Scope.extend(scope))
)
const gateway = `${up.hosts.hosts[0]!.address}:${PORTS.gateway}`
console.log(`\nReef is up on ${n} hosts. Try: pnpm reef status --gateway ${gateway}`)
console.log("Ctrl-C stops every actor, the NATS cluster and the hosts.")
const stop = () =>
  void Effect.runPromise(Scope.close(scope, Exit.void)).finally(() => {
    process.exit(0)
  })
process.once("SIGINT", stop)
process.once("SIGTERM", stop)
