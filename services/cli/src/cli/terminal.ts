/**
 * Colour decisions for `reef` output (@reef/devkit/output, shared with the benchmarks), the style of this
 * process's own streams, the terminal's width.
 */
import { colourEnabled, makeStyle, type Style } from "@reef/devkit/output"

export { colourEnabled, type Env, makeStyle, type Style } from "@reef/devkit/output"

/** Style for stdout / stderr of this process. */
export const stdoutStyle = (): Style => makeStyle(colourEnabled(process.stdout.isTTY))
export const stderrStyle = (): Style => makeStyle(colourEnabled(process.stderr.isTTY))

/** Columns to wrap help at: the terminal's width (at most 120), 100 when not a terminal. */
export const terminalWidth = (): number =>
  process.stdout.isTTY && process.stdout.columns > 40 ? Math.min(120, process.stdout.columns) : 100

/** Removes ANSI escape sequences (for widths and for tests). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC is exactly what is matched.
export const stripAnsi = (s: string): string => s.replace(/\x1b\[[0-9;]*[A-Za-z]/g, "")
