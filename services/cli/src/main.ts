/**
 * The `reef` binary. `reef run` (an actor process: long-lived, counted in megabytes) loads only what it needs;
 * every other command goes through the full @effect/cli definition in cli-main.ts.
 */
const argv = process.argv
if (argv[2] === "run" && !argv.includes("--help") && !argv.includes("-h")) {
  const { main } = await import("./run-main.js")
  main(argv.slice(3))
} else {
  const { main } = await import("./cli-main.js")
  main(argv)
}
