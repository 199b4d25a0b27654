/**
 * Reading a Grafana dashboard the way a test needs to: every PromQL query it runs (panel targets and template
 * variables) and the metric names each one reads. Grafana is not installable here, so the Reef dashboard is
 * checked against what running actors really export (tests/src/cli.test.ts) and, when a Prometheus binary is
 * installed, evaluated by it.
 */

export interface DashboardQuery {
  /** Panel title (or `variable <name>`). */
  readonly where: string
  readonly expr: string
}

interface Panel {
  readonly title?: string
  readonly targets?: ReadonlyArray<{ readonly expr?: string }>
  readonly panels?: ReadonlyArray<Panel>
}

interface Dashboard {
  readonly panels?: ReadonlyArray<Panel>
  readonly templating?: {
    readonly list?: ReadonlyArray<{ readonly name: string; readonly query?: string | { readonly query?: string } }>
  }
}

/** Every query of a dashboard (nested rows included), with where it is. */
export const dashboardQueries = (dashboard: unknown): ReadonlyArray<DashboardQuery> => {
  const d = dashboard as Dashboard
  const queries: Array<DashboardQuery> = []
  const visit = (panels: ReadonlyArray<Panel> | undefined) => {
    for (const panel of panels ?? []) {
      for (const target of panel.targets ?? []) {
        if (target.expr !== undefined) queries.push({ where: panel.title ?? "(untitled)", expr: target.expr })
      }
      visit(panel.panels)
    }
  }
  visit(d.panels)
  for (const variable of d.templating?.list ?? []) {
    const query = typeof variable.query === "string" ? variable.query : variable.query?.query
    if (query !== undefined && query !== "") queries.push({ where: `variable ${variable.name}`, expr: query })
  }
  return queries
}

const KEYWORDS = new Set([
  "by",
  "without",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "bool",
  "and",
  "or",
  "unless",
  "offset",
  "inf",
  "nan"
])

/**
 * The metric names a PromQL expression (or a Grafana `label_values(metric, label)` query) reads: identifiers
 * that are not functions, keywords, label names or Grafana variables.
 */
export const promqlMetricNames = (expr: string): ReadonlyArray<string> => {
  const labelValues = /^\s*label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,/.exec(expr)
  if (labelValues !== null) return [labelValues[1]!]
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, " ") // strings
    .replace(/\{[^}]*\}/g, " ") // label matchers
    .replace(/\[[^\]]*\]/g, " ") // ranges and subqueries
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ") // label lists
    .replace(/\$\{?\w+\}?/g, " ") // Grafana variables
  const names = new Set<string>()
  for (const match of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const name = match[0]
    const after = stripped.slice(match.index! + name.length)
    if (/^\s*\(/.test(after) || KEYWORDS.has(name.toLowerCase())) continue
    // Part of a number such as 1e3 or a duration such as 5m.
    if (/[0-9.]$/.test(stripped.slice(0, match.index!))) continue
    names.add(name)
  }
  return [...names]
}

/** Grafana's variables replaced by values Prometheus accepts, to evaluate a dashboard query directly. */
export const withGrafanaVariables = (expr: string, rateInterval = "30s"): string =>
  expr.replace(/\$__rate_interval|\$__interval|\$\{__rate_interval\}/g, rateInterval).replace(/\$\{?\w+\}?/g, ".*")

/** Sample names of a Prometheus text page (`x_bucket`, `x_sum`, `x_count` for a histogram `x`). */
export const exportedSampleNames = (page: string): ReadonlySet<string> =>
  new Set(
    page
      .split("\n")
      .filter((line) => line !== "" && !line.startsWith("#"))
      .map((line) => /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0] ?? "")
      .filter((name) => name !== "")
  )
