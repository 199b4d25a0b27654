/**
 * Output of long-running commands (`reef up`, the workload): permanent lines, plus on a terminal one status
 * line at the bottom that rewrites itself ("starting: 4 of 6 ready, waiting for r1 r2"). Without a terminal
 * the status line is not drawn; callers print plain lines for what matters instead (`plain`).
 */
import { colourEnabled, makeStyle, type Style } from "./cli/terminal.js"

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
