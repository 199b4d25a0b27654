#!/usr/bin/env -S node --max-semi-space-size=2
// The flag: see REEF_NODE_FLAGS in libs/devkit/src/reef-command.ts. The installed `reef` binary runs the compiled CLI (pnpm build first); `pnpm reef` runs it from source.
await import("../dist/main.js")
