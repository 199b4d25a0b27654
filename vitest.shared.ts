import { defineProject } from "vitest/config"

/** Per-package vitest project: sources (not dist) resolve through the `@reef/source` export condition. */
export const reefProject = (name: string, options: { readonly timeoutMs?: number } = {}) =>
  defineProject({
    resolve: { conditions: ["@reef/source"] },
    ssr: { resolve: { conditions: ["@reef/source"] } },
    test: {
      name,
      include: ["src/**/*.test.ts"],
      testTimeout: options.timeoutMs ?? 30_000,
      hookTimeout: 30_000
    }
  })
