import { defineConfig } from "vitest/config"

// One vitest project per package; each package's vitest.config.ts uses vitest.shared.ts.
export default defineConfig({
  test: {
    projects: ["proto", "libs/*", "actors/*", "services/*", "observability", "tests", "bench"]
  }
})
