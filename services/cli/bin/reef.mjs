#!/usr/bin/env node
// The installed `reef` binary runs the compiled CLI (pnpm build first); `pnpm reef` runs it from source.
await import("../dist/main.js")
