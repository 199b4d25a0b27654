/**
 * Where a nemesis's processes run on the hosts: `hostIndexOf` maps an actor id to a host, and the placement
 * says (once per actor) where it runs, with its host's NATS URL, address and `ip netns exec` prefix.
 */
import type { Hosts } from "@reef/devkit/hosts"

export const placeOnHosts = (h: Hosts, hostIndexOf: (actor: string) => number) => {
  const said = new Set<string>()
  return (actor: string) => {
    const host = h.hosts[hostIndexOf(actor)]!
    if (!said.has(actor)) {
      said.add(actor)
      console.log(`${actor} runs on ${host.name} (${host.address}), NATS ${host.natsUrl}`)
    }
    return { natsUrl: host.natsUrl, address: host.address, prefix: host.exec }
  }
}

/** The site's servers as a nemesis names them. */
export const hostServers = (h: Hosts) =>
  h.servers.map((s) => ({ name: `nats-server@${s.host}`, kill: s.kill, restart: s.restart, pid: s.pid }))
