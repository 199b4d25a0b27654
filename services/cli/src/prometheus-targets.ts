/**
 * Prometheus's view of a Reef cluster: a file_sd target file (one target per actor process that announces
 * a `/metrics` endpoint, labelled with its role, id and cluster), kept current by `reef up` as actors join
 * and leave. observability/prometheus.yml reads it; Prometheus notices changes by itself.
 */
import { mkdirSync, renameSync, writeFileSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import { isJoined } from "@reef/kernel"
import type { Member } from "@reef/proto"

/**
 * Where `reef up` keeps the targets for the cluster file `clusterFile`: next to it, `prometheus-targets.json` for
 * the default `cluster.json`, else `<name>.prometheus-targets.json` (`my.json` -> `my.prometheus-targets.json`),
 * never the cluster file itself.
 */
export const targetsPathFor = (clusterFile: string): string => {
  const name = basename(clusterFile)
  const stem = name.endsWith(".json") ? name.slice(0, -".json".length) : name
  return join(
    dirname(clusterFile),
    name === "cluster.json" ? "prometheus-targets.json" : `${stem}.prometheus-targets.json`
  )
}

export interface TargetGroup {
  readonly targets: ReadonlyArray<string>
  readonly labels: Readonly<Record<string, string>>
}

/** `http://127.0.0.1:9464/metrics` -> `127.0.0.1:9464` (what Prometheus scrapes at its metrics_path). */
const hostPort = (url: string): string | undefined => (URL.canParse(url) ? new URL(url).host : undefined)

export const prometheusTargets = (members: ReadonlyArray<Member>, cluster: string): ReadonlyArray<TargetGroup> =>
  members
    .filter(isJoined)
    .flatMap((m) => {
      const url = m.lastHeartbeat?.endpoints.metrics
      const target = url === undefined ? undefined : hostPort(url)
      return target === undefined
        ? []
        : [{ targets: [target], labels: { cluster, role: m.address?.role ?? "", id: m.address?.id ?? "" } }]
    })
    .sort((a, b) => a.targets[0]!.localeCompare(b.targets[0]!))

export const writePrometheusTargets = (path: string, groups: ReadonlyArray<TargetGroup>): void => {
  mkdirSync(dirname(path), { recursive: true })
  const temporary = `${path}.${process.pid}.tmp`
  writeFileSync(temporary, `${JSON.stringify(groups, null, 2)}\n`)
  renameSync(temporary, path)
}
