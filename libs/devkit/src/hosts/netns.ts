/**
 * "Hosts" on one machine: N network namespaces, each joined to a bridge in the root namespace by a veth pair
 * and given its own address in a private /24 made for the run. The root namespace holds the bridge's address
 * (the gateway): the test process and the link proxy reach every host there, and the hosts reach each other
 * through the bridge. Nothing is routed anywhere else.
 *
 * Needs root (CAP_NET_ADMIN) and `ip` (iproute2). `hostsUnavailable()` says why not when they are missing, so a
 * test can skip with the reason. Everything made is removed when the scope closes, and also by a synchronous
 * exit hook if the process dies first; a run also sweeps what a dead run of an earlier process left behind
 * (names carry the owning pid).
 */
import { execFileSync } from "node:child_process"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"

export class HostsError extends Data.TaggedError("HostsError")<{ readonly reason: string }> {
  override get message() {
    return this.reason
  }
}

export interface Host {
  /** h1, h2, ... */
  readonly name: string
  /** The network namespace it runs in. */
  readonly netns: string
  readonly address: string
  /** The root-namespace end of its veth pair: down cuts the host off entirely. */
  readonly link: string
  /** Prefix for a command run on this host (`ip netns exec <netns>`). */
  readonly exec: ReadonlyArray<string>
}

export interface HostNetwork {
  readonly hosts: ReadonlyArray<Host>
  /** The bridge's address in the root namespace (where the test process and the link proxy listen). */
  readonly gateway: string
  /** Sets the host's link down (`false`) or up (`true`). */
  readonly setLink: (index: number, up: boolean) => Effect.Effect<void, HostsError>
}

const PREFIX = "reef"

const ip = (args: ReadonlyArray<string>): string =>
  execFileSync("ip", [...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })

const tryIp = (args: ReadonlyArray<string>): Effect.Effect<string, HostsError> =>
  Effect.try({
    try: () => ip(args),
    catch: (cause) =>
      new HostsError({
        reason: `ip ${args.join(" ")}: ${cause instanceof Error ? (((cause as { stderr?: string }).stderr ?? "") || cause.message).trim() : String(cause)}`
      })
  })

let probed: string | undefined | null = null
/** Why hosts cannot be made here (not root, no `ip`, namespaces refused), or undefined when they can. */
export const hostsUnavailable = (): string | undefined => {
  if (probed !== null) return probed
  const name = `${PREFIX}${process.pid}probe`
  try {
    if (typeof process.getuid === "function" && process.getuid() !== 0) {
      probed = "network namespaces need root (CAP_NET_ADMIN); this process is not root"
      return probed
    }
    ip(["netns", "add", name])
    ip(["netns", "delete", name])
    probed = undefined
  } catch (cause) {
    const stderr = (cause as { stderr?: string }).stderr
    probed = `cannot create a network namespace: ${(stderr || (cause instanceof Error ? cause.message : String(cause))).trim()}`
  }
  return probed
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (cause) {
    return (cause as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Removes namespaces and bridges left by earlier processes that died without cleaning up. */
const sweepStale = () => {
  const owner = (name: string) => /^reef(\d+)[hb]/.exec(name)?.[1]
  for (const line of ip(["netns", "list"]).split("\n")) {
    const name = line.split(" ")[0] ?? ""
    const pid = owner(name)
    if (pid !== undefined && !alive(Number(pid))) ignore(() => ip(["netns", "delete", name]))
  }
  for (const line of ip(["-o", "link", "show", "type", "bridge"]).split("\n")) {
    const name = /^\d+: ([^:@]+)/.exec(line)?.[1] ?? ""
    const pid = owner(name)
    if (pid !== undefined && !alive(Number(pid))) ignore(() => ip(["link", "delete", name]))
  }
}

const ignore = (f: () => unknown) => {
  try {
    f()
  } catch {}
}

/** A /24 in 10.200-254.x.0 that no interface of the root namespace uses. */
const freeSubnet = (): string => {
  const used = ip(["-4", "-o", "addr", "show"])
  for (let attempt = 0; attempt < 200; attempt++) {
    const subnet = `10.${200 + ((process.pid + attempt) % 55)}.${(process.pid * 7 + attempt * 13) % 256}`
    if (!used.includes(` ${subnet}.`)) return subnet
  }
  throw new Error("no free 10.x.y.0/24 subnet")
}

let sequence = 0

/**
 * Makes `n` hosts in the current scope. Interface names stay within Linux's 15 characters:
 * `reef<pid>b<k>` for the bridge, `reef<pid>v<k><i>` for host i's veth end in the root namespace.
 */
export const makeHostNetwork = (n: number) =>
  Effect.gen(function* () {
    const reason = hostsUnavailable()
    if (reason !== undefined) return yield* new HostsError({ reason })
    const k = sequence++
    const tag = `${PREFIX}${process.pid}`
    const bridge = `${tag}b${k}`
    if (bridge.length > 15 || n > 9) return yield* new HostsError({ reason: `interface names too long for ${tag}` })
    const made: { netns: Array<string>; links: Array<string> } = { netns: [], links: [] }
    const teardown = () => {
      for (const netns of made.netns) ignore(() => ip(["netns", "delete", netns]))
      for (const link of made.links) ignore(() => ip(["link", "delete", link]))
      made.netns.length = 0
      made.links.length = 0
    }
    const onExit = () => teardown()
    return yield* Effect.acquireRelease(
      Effect.gen(function* () {
        process.once("exit", onExit)
        yield* Effect.try({ try: sweepStale, catch: (cause) => new HostsError({ reason: `sweeping: ${cause}` }) })
        const subnet = yield* Effect.try({
          try: freeSubnet,
          catch: (cause) => new HostsError({ reason: String(cause) })
        })
        const gateway = `${subnet}.254`
        yield* tryIp(["link", "add", bridge, "type", "bridge"])
        made.links.push(bridge)
        yield* tryIp(["addr", "add", `${gateway}/24`, "dev", bridge])
        yield* tryIp(["link", "set", bridge, "up"])
        const hosts: Array<Host> = []
        for (let i = 1; i <= n; i++) {
          const netns = `${tag}h${k}${i}`
          const link = `${tag}v${k}${i}`
          const peer = `${tag}p${k}${i}`
          const address = `${subnet}.${i}`
          yield* tryIp(["netns", "add", netns])
          made.netns.push(netns)
          yield* tryIp(["link", "add", link, "type", "veth", "peer", "name", peer])
          made.links.push(link)
          yield* tryIp(["link", "set", peer, "netns", netns])
          yield* tryIp(["link", "set", link, "master", bridge])
          yield* tryIp(["link", "set", link, "up"])
          const inside = ["netns", "exec", netns, "ip"]
          yield* tryIp([...inside, "link", "set", "lo", "up"])
          yield* tryIp([...inside, "link", "set", peer, "name", "eth0"])
          yield* tryIp([...inside, "addr", "add", `${address}/24`, "dev", "eth0"])
          yield* tryIp([...inside, "link", "set", "eth0", "up"])
          hosts.push({ name: `h${i}`, netns, address, link, exec: ["ip", "netns", "exec", netns] })
        }
        const network: HostNetwork = {
          hosts,
          gateway,
          setLink: (index, up) => tryIp(["link", "set", hosts[index]!.link, up ? "up" : "down"]).pipe(Effect.asVoid)
        }
        return network
      }).pipe(Effect.tapError(() => Effect.sync(teardown))),
      () =>
        Effect.sync(() => {
          teardown()
          process.removeListener("exit", onExit)
        })
    )
  })
