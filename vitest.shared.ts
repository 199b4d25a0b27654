import { defineProject } from "vitest/config"

/** Per-package vitest project: sources (not dist) resolve through the `@reef/source` export condition. */
export const reefProject = (
  name: string,
  options: {
    readonly timeoutMs?: number
    /** Run this package's test files one at a time (each starts clusters of real processes). */
    readonly sequential?: boolean
  } = {}
) =>
  defineProject({
    resolve: { conditions: ["@reef/source"] },
    ssr: { resolve: { conditions: ["@reef/source"] } },
    test: {
      name,
      include: ["src/**/*.test.ts"],
      testTimeout: options.timeoutMs ?? 30_000,
      fileParallelism: !options.sequential,
      hookTimeout: 30_000
    }
  })
