/**
 * `pnpm test:nemesis [remora] [--minutes N] [--seed S]`: the POPUC nemesis (popuc-nemesis-main.ts) by default,
 * Remora's (remora-nemesis-main.ts) when the first argument is `remora`.
 */
if (process.argv[2] === "remora") await import("./remora-nemesis-main.js")
else await import("./popuc-nemesis-main.js")
