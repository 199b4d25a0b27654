/**
 * Colour and progress decisions for `reef` output. Colour only on a terminal, never with `NO_COLOR` set
 * (https://no-color.org), forced with `FORCE_COLOR` (what `reef up` gives the children whose output it
 * shows on its own terminal). Progress lines that rewrite themselves only on a terminal; plain lines otherwise.
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

/** Style for stdout / stderr of this process. */
export const stdoutStyle = (): Style => makeStyle(colourEnabled(process.stdout.isTTY))
export const stderrStyle = (): Style => makeStyle(colourEnabled(process.stderr.isTTY))

/** Columns to wrap help at: the terminal's width (at most 120), 100 when not a terminal. */
export const terminalWidth = (): number =>
  process.stdout.isTTY && process.stdout.columns > 40 ? Math.min(120, process.stdout.columns) : 100

/** Removes ANSI escape sequences (for widths and for tests). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC is exactly what is matched.
export const stripAnsi = (s: string): string => s.replace(/\x1b\[[0-9;]*[A-Za-z]/g, "")
