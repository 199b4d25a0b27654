/**
 * Runs a command's Effect as the `reef` process: one log line per event on stderr (time, level, message;
 * coloured only on a terminal without NO_COLOR), SIGINT/SIGTERM interrupt it (scopes close, so every process
 * and server it started stops), and a failure is one line, `reef: <what went wrong>`, with exit code 1, or
 * 2 for a mistake in the command line found only while running (`UsageError`). `--verbose` adds debug logs and
 * the full cause of a failure.
 */
import { inspect } from "node:util"
import { runMain } from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import { type CliFailure, UsageError } from "./errors.js"
import { colourEnabled, makeStyle, type Style } from "./terminal.js"

export const EXIT_FAILURE = 1
export const EXIT_USAGE = 2

const messageOf = (value: unknown): string => {
  if (typeof value === "string") return value
  if (value instanceof Error || (typeof value === "object" && value !== null && "message" in value)) {
    const message = String((value as { message: unknown }).message)
    if (message !== "") return message
  }
  if (typeof value === "object" && value !== null && "_tag" in value) return String((value as { _tag: unknown })._tag)
  return inspect(value, { depth: 2, breakLength: Number.POSITIVE_INFINITY })
}

/** The one line a failure prints (without `reef: `). */
export const describeFailure = (cause: Cause.Cause<unknown>): string =>
  Option.match(Cause.failureOption(cause), {
    onSome: messageOf,
    onNone: () => {
      const defect = Cause.dieOption(cause)
      return Option.isSome(defect)
        ? `internal error: ${messageOf(defect.value)} (run with --verbose for the stack trace)`
        : "interrupted"
    }
  })

const pad2 = (n: number) => String(n).padStart(2, "0")
const clock = (date: Date) =>
  `${pad2(date.getHours())}:${pad2(date.getMinutes())}:${pad2(date.getSeconds())}.${String(date.getMilliseconds()).padStart(3, "0")}`

const levelStyle = (style: Style, level: LogLevel.LogLevel): string => {
  const label = level.label.padEnd(5)
  if (LogLevel.greaterThanEqual(level, LogLevel.Error)) return style.error(label)
  if (LogLevel.greaterThanEqual(level, LogLevel.Warning)) return style.warn(label)
  if (LogLevel.greaterThanEqual(level, LogLevel.Info)) return style.good(label)
  return style.dim(label)
}

/** Compact one-line logs on stderr: `12:00:01.234 INFO  message key=value`. */
export const reefLogger = (style: Style, verbose: boolean, write: (line: string) => void) =>
  Logger.make(({ logLevel, message, cause, annotations, date }) => {
    const parts = (Array.isArray(message) ? message : [message]).map(messageOf)
    let line = `${style.dim(clock(date))} ${levelStyle(style, logLevel)} ${parts.join(" ")}`
    for (const [key, value] of annotations) line += ` ${style.dim(`${key}=`)}${messageOf(value)}`
    if (!Cause.isEmptyType(cause)) {
      line += verbose ? `\n${Cause.pretty(cause, { renderErrorCause: true })}` : `: ${describeFailure(cause)}`
    }
    write(`${line}\n`)
  })

export interface ProgramOptions {
  readonly verbose: boolean
  /** Printed after a UsageError: the command's usage and where its help is. */
  readonly usage: (style: Style) => string
}

/** Runs `program` as this process, until it ends or a signal interrupts it; exits with its code. */
export const runProgram = (program: Effect.Effect<void, CliFailure>, options: ProgramOptions): void => {
  const style = makeStyle(colourEnabled(process.stderr.isTTY))
  const logger = reefLogger(style, options.verbose, (line) => process.stderr.write(line))
  const reported = program.pipe(
    Effect.tapErrorCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.void
        : Effect.sync(() => {
            process.stderr.write(`${style.error("reef:")} ${describeFailure(cause)}\n`)
            if (Option.exists(Cause.failureOption(cause), (e) => e instanceof UsageError)) {
              process.stderr.write(options.usage(style))
            } else if (options.verbose) {
              process.stderr.write(`${Cause.pretty(cause, { renderErrorCause: true })}\n`)
            }
          })
    ),
    Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
    Logger.withMinimumLogLevel(options.verbose ? LogLevel.Debug : LogLevel.Info)
  )
  runMain(reported, {
    disableErrorReporting: true,
    disablePrettyLogger: true,
    teardown: (exit, onExit) => {
      if (Exit.isSuccess(exit) || Cause.isInterruptedOnly(exit.cause)) return onExit(0)
      const failure = Cause.failureOption(exit.cause)
      onExit(Option.exists(failure, (e) => e instanceof UsageError) ? EXIT_USAGE : EXIT_FAILURE)
    }
  })
}
