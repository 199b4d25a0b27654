/**
 * Output of long-running tools (`reef up`, `reef`'s workload, long benchmarks): colour only on a terminal,
 * never with `NO_COLOR` set (https://no-color.org), forced with `FORCE_COLOR` (what `reef up` gives the
 * children whose output it shows on its own terminal); permanent lines, plus on a terminal one status line at
 * the bottom that rewrites itself ("starting: 4 of 6 ready, waiting for r1 r2"). Without a terminal the status
 * line is not drawn; callers print plain lines for what matters instead.
 */

export type Env = Readonly<Record<string, string | undefined>>

/** Whether output to a stream with this TTY flag gets ANSI colours. */
export const colourEnabled = (isTty: boolean | undefined, env: Env = process.env): boolean => {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "" && env.FORCE_COLOR !== "0") return true
  return isTty === true && env.TERM !== "dumb"
}

export interface Style {
  readonly enabled: boolean
  readonly heading: (s: string) => string
  readonly strong: (s: string) => string
  readonly dim: (s: string) => string
  readonly error: (s: string) => string
  readonly warn: (s: string) => string
  readonly good: (s: string) => string
}

const sgr = (code: string) => (s: string) => `\x1b[${code}m${s}\x1b[0m`

export const makeStyle = (enabled: boolean): Style =>
  enabled
    ? {
        enabled,
        heading: sgr("1"),
        strong: sgr("1"),
        dim: sgr("2"),
        error: sgr("1;31"),
        warn: sgr("33"),
        good: sgr("32")
      }
    : {
        enabled,
        heading: String,
        strong: String,
        dim: String,
        error: String,
        warn: String,
        good: String
      }

export interface Output {
  readonly style: Style
  /** Whether a status line is drawn (stdout is a terminal). */
  readonly live: boolean
  /** A permanent line (the status line is redrawn under it). */
  readonly line: (text: string) => void
  /** Replaces the status line (terminal only); empty text removes it. */
  readonly status: (text: string) => void
}

export const makeOutput = (
  stream: NodeJS.WriteStream = process.stdout,
  env: Readonly<Record<string, string | undefined>> = process.env
): Output => {
  const live = stream.isTTY === true && env.TERM !== "dumb"
  const style = makeStyle(colourEnabled(stream.isTTY, env))
  let current = ""
  const clear = () => {
    if (live && current !== "") stream.write("\r\x1b[2K")
  }
  const draw = () => {
    if (live && current !== "") {
      const width = stream.columns > 10 ? stream.columns - 1 : 79
      stream.write(current.length > width ? `${current.slice(0, width - 1)}…` : current)
    }
  }
  return {
    style,
    live,
    line: (text) => {
      clear()
      stream.write(`${text}\n`)
      draw()
    },
    status: (text) => {
      if (!live) return
      clear()
      current = text
      draw()
    }
  }
}

/** A line for a count that grows toward a total: `kv set: 1,200 of 2,000 (60%), 5,321/s`. */
export const progressText = (what: string, done: number, total: number, seconds: number): string => {
  const percent = total === 0 ? 100 : Math.floor((100 * done) / total)
  const rate = seconds > 0 ? `, ${Math.round(done / seconds).toLocaleString("en-US")}/s` : ""
  return `${what}: ${done.toLocaleString("en-US")} of ${total.toLocaleString("en-US")} (${percent}%)${rate}`
}
