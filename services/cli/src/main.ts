/**
 * The `reef` binary: parses the command line against the command tree (commands/index.ts) before anything
 * starts, prints help or a usage error (exit 2) itself, and runs the chosen command's Effect otherwise
 * (cli/program.ts). Each command loads its own packages when it runs, so `reef run counter` (an actor process,
 * long-lived and counted in megabytes) never loads the gateway client or the launcher.
 */

import { surviveClosedOutput } from "@reef/devkit/output"
import { endEarlySignals } from "./cli/early-signals.js"
import { helpText, usageErrorText, usageLine } from "./cli/help.js"
import { parseCommandLine } from "./cli/parse.js"
import { EXIT_USAGE, runProgram } from "./cli/program.js"
import { stderrStyle, stdoutStyle, terminalWidth } from "./cli/terminal.js"
import { reefCommand, VERSION } from "./commands/index.js"

const parsed = parseCommandLine(reefCommand, process.argv.slice(2))

// A closed reader of our output (`reef up | head -3`, `reef watch | head`) is not a crash. Processes that run a
// cluster or an actor keep running without their output (Ctrl-C still stops them and all they started);
// a client command stops as if interrupted.
const keepsRunning = parsed._tag === "Run" && ["up", "run"].includes(parsed.path[1]?.name ?? "")
for (const stream of [process.stdout, process.stderr]) {
  surviveClosedOutput(stream, () => {
    if (!keepsRunning) process.kill(process.pid, "SIGTERM")
  })
}
switch (parsed._tag) {
  case "Help":
    process.stdout.write(helpText(parsed.path, stdoutStyle(), terminalWidth()))
    break
  case "Version":
    process.stdout.write(`reef ${VERSION}\n`)
    break
  case "UsageError":
    process.stderr.write(usageErrorText(parsed.path, parsed.message, stderrStyle()))
    process.exitCode = EXIT_USAGE
    break
  case "Run":
    runProgram(parsed.run(), {
      verbose: parsed.globals.verbose,
      usage: (style) =>
        `${style.heading("Usage:")} ${usageLine(parsed.path)}\nRun '${parsed.path.map((c) => c.name).join(" ")} --help' for more.\n`
    })
    endEarlySignals()
}
