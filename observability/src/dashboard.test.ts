import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { dashboardQueries, exportedSampleNames, promqlMetricNames, withGrafanaVariables } from "./dashboard.js"

const reefDashboard = JSON.parse(
  readFileSync(new URL("../grafana/dashboards/reef.json", import.meta.url), "utf8")
) as Record<string, any>

describe("promqlMetricNames", () => {
  it("finds the metrics and skips functions, labels, ranges, strings and variables", () => {
    expect(
      promqlMetricNames(
        'histogram_quantile(0.99, sum by (le, actor) (rate(reef_actor_handle_latency_ms_bucket{cluster=~"$cluster", x="a b"}[$__rate_interval])))'
      )
    ).toEqual(["reef_actor_handle_latency_ms_bucket"])
    expect(
      promqlMetricNames(
        "max by (group) (reef_popuc_applied_instance) - on (group) group_right reef_popuc_applied_instance offset 5m"
      )
    ).toEqual(["reef_popuc_applied_instance"])
    expect(promqlMetricNames("a_total / ignoring(reason) b_total > bool 1e3")).toEqual(["a_total", "b_total"])
    expect(promqlMetricNames("label_values(process_start_time_seconds, cluster)")).toEqual([
      "process_start_time_seconds"
    ])
  })

  it("turns Grafana variables into values Prometheus takes", () => {
    expect(withGrafanaVariables('rate(x{cluster=~"$cluster"}[$__rate_interval])')).toBe('rate(x{cluster=~".*"}[30s])')
  })

  it("reads sample names from a scrape page", () => {
    expect([...exportedSampleNames('# TYPE a counter\na{x="1"} 2\nb_bucket{le="+Inf"} 1\n')]).toEqual(["a", "b_bucket"])
  })
})

describe("the Reef dashboard (grafana/dashboards/reef.json)", () => {
  const queries = dashboardQueries(reefDashboard)

  it("has queries on every panel, each reading at least one metric through the provisioned datasource", () => {
    expect(queries.length).toBeGreaterThan(15)
    for (const { where, expr } of queries)
      expect(promqlMetricNames(expr).length, `${where}: ${expr}`).toBeGreaterThan(0)
    const panels = (reefDashboard.panels as Array<any>).filter((p) => p.type !== "row")
    for (const panel of panels) {
      expect(panel.datasource?.uid, panel.title).toBe("prometheus")
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0)
    }
    const ids = (reefDashboard.panels as Array<any>).map((p) => p.id)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it("covers the cluster overview, KV throughput and latency, POPUC rounds and self-quits", () => {
    const all = queries.map((q) => q.expr).join("\n")
    for (const metric of [
      "reef_actor_handled_total",
      "reef_actor_mailbox_depth",
      "process_resident_memory_bytes",
      "reef_kv_commands_applied_total",
      "reef_kv_request_duration_ms_bucket",
      "reef_popuc_rounds_total",
      "reef_popuc_self_quits_total",
      "reef_popuc_instance_duration_ms_bucket"
    ]) {
      expect(all).toContain(metric)
    }
  })
})
