/**
 * `@reef/devkit/hosts`: Reef on several "hosts" of one machine (network namespaces on a bridge), a NATS
 * cluster with one server per host, and a link proxy that adds delay and jitter to the inter-host links and
 * cuts a host off. Tests (tests/src/hosts) and benchmarks (`pnpm bench popuc --hosts 3`) use it; it needs root.
 */
export {
  type ClusterHost,
  type HostNatsServer,
  type Hosts,
  type HostsOptions,
  type LinkProxyProcess,
  NATS_CLIENT_PORT,
  NATS_MONITOR_PORT,
  NATS_ROUTE_PORT,
  routeCountsOf,
  routesFormedOf,
  startHostNats,
  startHosts,
  startLinkProxyProcess
} from "./hosts.js"
export type { LinkSpec, ProxyOptions, ProxyStats } from "./link-proxy.js"
export { type Host, type HostNetwork, HostsError, hostsUnavailable, makeHostNetwork } from "./netns.js"
