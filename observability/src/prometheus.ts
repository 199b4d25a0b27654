/**
 * Effect's metric registry in the Prometheus text exposition format (version 0.0.4), which every actor
 * serves on `/metrics` (metrics-server.ts). Pure: a snapshot in, the page out.
 *
 * Why not OTel's Prometheus exporter: it needs the OTel metrics SDK in every actor process (measured ~5 MB
 * more RSS per process, against an idle budget of 120 MB), and pins SDK versions other than ours. Effect's
 * registry already holds every value; this is only its text form.
 *
 * Mapping: an incremental counter is a `counter`, any other counter and a gauge a `gauge`, a histogram a
 * `histogram` (Effect keeps cumulative buckets, as Prometheus wants), a summary a `summary`, a frequency a
 * `counter` per occurrence (label `occurrence`). Names and label names are sanitized to Prometheus's
 * alphabet; label values escaped. Series are sorted, so the page is deterministic.
 */
import type * as MetricKey from "effect/MetricKey"
import * as MetricKeyType from "effect/MetricKeyType"
import type * as MetricPair from "effect/MetricPair"
import * as MetricState from "effect/MetricState"
import * as Option from "effect/Option"

/** The Content-Type of the text format. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

export type Labels = Readonly<Record<string, string>>

export const sanitizeMetricName = (name: string): string => {
  const clean = name.replace(/[^a-zA-Z0-9_:]/g, "_")
  return /^[a-zA-Z_:]/.test(clean) ? clean : `_${clean}`
}

export const sanitizeLabelName = (name: string): string => {
  const clean = name.replace(/[^a-zA-Z0-9_]/g, "_")
  return /^[a-zA-Z_]/.test(clean) ? clean : `_${clean}`
}

const escapeLabelValue = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"')
const escapeHelp = (text: string) => text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")

const formatLabels = (labels: Labels): string => {
  const entries = Object.entries(labels)
  if (entries.length === 0) return ""
  return `{${entries.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(",")}}`
}

/** Prometheus's spelling of a sample value (`+Inf`, `-Inf`, `NaN`). */
export const formatValue = (value: number | bigint): string => {
  if (typeof value === "bigint") return value.toString()
  if (Number.isNaN(value)) return "NaN"
  if (value === Number.POSITIVE_INFINITY) return "+Inf"
  if (value === Number.NEGATIVE_INFINITY) return "-Inf"
  return String(value)
}

type PrometheusType = "counter" | "gauge" | "histogram" | "summary"

interface Family {
  readonly name: string
  readonly type: PrometheusType
  readonly help: string
  readonly lines: Array<{ readonly sortKey: string; readonly text: string }>
}

const typeOf = (key: MetricKey.MetricKey.Untyped): PrometheusType => {
  const keyType = key.keyType
  if (MetricKeyType.isCounterKey(keyType)) return keyType.incremental ? "counter" : "gauge"
  if (MetricKeyType.isHistogramKey(keyType)) return "histogram"
  if (MetricKeyType.isSummaryKey(keyType)) return "summary"
  if (MetricKeyType.isFrequencyKey(keyType)) return "counter"
  return "gauge"
}

const sample = (name: string, labels: Labels, value: number | bigint) => ({
  sortKey: `${name}${formatLabels(labels)}`,
  text: `${name}${formatLabels(labels)} ${formatValue(value)}`
})

/** The samples of one metric pair, in exposition order (buckets ascending, then _sum and _count). */
const samplesOf = (name: string, labels: Labels, state: MetricState.MetricState.Untyped) => {
  if (MetricState.isCounterState(state)) return [sample(name, labels, state.count as number | bigint)]
  if (MetricState.isGaugeState(state)) return [sample(name, labels, state.value as number | bigint)]
  if (MetricState.isFrequencyState(state)) {
    return [...state.occurrences].map(([occurrence, count]) => sample(name, { ...labels, occurrence }, count))
  }
  if (MetricState.isHistogramState(state)) {
    const buckets = state.buckets.map(([le, count]) => ({ le, count }))
    if (buckets.length === 0 || buckets[buckets.length - 1]!.le !== Number.POSITIVE_INFINITY) {
      buckets.push({ le: Number.POSITIVE_INFINITY, count: state.count })
    }
    // Keep the bucket order (sorting `le` as text would put 10 before 2).
    return [
      ...buckets.map((b, i) => ({
        sortKey: `${name}${formatLabels(labels)}${String(i).padStart(4, "0")}`,
        text: `${name}_bucket${formatLabels({ ...labels, le: formatValue(b.le) })} ${b.count}`
      })),
      { ...sample(`${name}_sum`, labels, state.sum), sortKey: `${name}${formatLabels(labels)}~sum` },
      { ...sample(`${name}_count`, labels, state.count), sortKey: `${name}${formatLabels(labels)}~t` }
    ]
  }
  if (MetricState.isSummaryState(state)) {
    return [
      ...state.quantiles.flatMap(([quantile, value], i) =>
        Option.isSome(value)
          ? [
              {
                sortKey: `${name}${formatLabels(labels)}${String(i).padStart(4, "0")}`,
                text: `${name}${formatLabels({ ...labels, quantile: String(quantile) })} ${formatValue(value.value)}`
              }
            ]
          : []
      ),
      { ...sample(`${name}_sum`, labels, state.sum), sortKey: `${name}${formatLabels(labels)}~sum` },
      { ...sample(`${name}_count`, labels, state.count), sortKey: `${name}${formatLabels(labels)}~t` }
    ]
  }
  return []
}

/**
 * The exposition page of `pairs` (Effect's `Metric.unsafeSnapshot()`), with `constantLabels` added to every
 * series (a tag of the metric wins over a constant label of the same name).
 */
export const prometheusText = (
  pairs: ReadonlyArray<MetricPair.MetricPair.Untyped>,
  constantLabels: Labels = {}
): string => {
  const families = new Map<string, Family>()
  for (const { metricKey, metricState } of pairs) {
    const name = sanitizeMetricName(metricKey.name)
    const type = typeOf(metricKey)
    let family = families.get(name)
    if (family === undefined) {
      family = { name, type, help: Option.getOrElse(metricKey.description, () => ""), lines: [] }
      families.set(name, family)
    } else if (family.type !== type) {
      // Two metrics of one name and different kinds: the page would be rejected whole; keep the first.
      continue
    }
    const labels: Record<string, string> = { ...constantLabels }
    for (const tag of metricKey.tags) labels[sanitizeLabelName(tag.key)] = tag.value
    const ordered = Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    family.lines.push(...samplesOf(name, ordered, metricState))
  }
  const out: Array<string> = []
  for (const family of [...families.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (family.help !== "") out.push(`# HELP ${family.name} ${escapeHelp(family.help)}`)
    out.push(`# TYPE ${family.name} ${family.type}`)
    for (const line of family.lines.sort((a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0))) {
      out.push(line.text)
    }
  }
  return out.length === 0 ? "" : `${out.join("\n")}\n`
}
