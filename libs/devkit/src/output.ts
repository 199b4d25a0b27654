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

/** One watch per stream, however many Outputs write to it. */
const watched = new WeakMap<NodeJS.WritableStream, { closed: boolean; listeners: Array<() => void> }>()

export interface Output {
  readonly style: Style
  /** Whether a status line is drawn (stdout is a terminal). */
  readonly live: boolean
  /** A permanent line (the status line is redrawn under it). */
  readonly line: (text: string) => void
  /** Replaces the status line (terminal only); empty text removes it. */
  readonly status: (text: string) => void
}

/**
 * Makes a closed reader of `stream` harmless: once a write fails with EPIPE (`reef up | head -3` after head has
 * exited), every `onClosed` given runs once and later writes through `makeOutput` are dropped, where Node would
 * throw the error from the stream's "error" event and end the process without stopping what it started.
 * Returns whether the stream is closed by now. Any number of calls share one watch per stream.
 */
export const surviveClosedOutput = (stream: NodeJS.WritableStream, onClosed?: () => void): (() => boolean) => {
  let watch = watched.get(stream)
  if (watch === undefined) {
    const state = { closed: false, listeners: [] as Array<() => void> }
    watch = state
    watched.set(stream, state)
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE" && error.code !== "ERR_STREAM_DESTROYED") throw error
      if (state.closed) return
      state.closed = true
      for (const listener of state.listeners) listener()
    })
  }
  if (onClosed !== undefined) watch.listeners.push(onClosed)
  const state = watch
  return () => state.closed
}

export const makeOutput = (
  stream: NodeJS.WriteStream = process.stdout,
  env: Readonly<Record<string, string | undefined>> = process.env
): Output => {
  const closed = surviveClosedOutput(stream)
  const write = (text: string) => {
    if (!closed()) stream.write(text)
  }
  const live = stream.isTTY === true && env.TERM !== "dumb"
  const style = makeStyle(colourEnabled(stream.isTTY, env))
  let current = ""
  const clear = () => {
    if (live && current !== "") write("\r\x1b[2K")
  }
  const draw = () => {
    if (live && current !== "") {
      const width = stream.columns > 10 ? stream.columns - 1 : 79
      write(current.length > width ? `${current.slice(0, width - 1)}…` : current)
    }
  }
  return {
    style,
    live,
    line: (text) => {
      clear()
      write(`${text}\n`)
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
