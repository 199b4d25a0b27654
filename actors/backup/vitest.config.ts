import { reefProject } from "../../vitest.shared.ts"

export default reefProject("@reef/backup", { timeoutMs: 120_000 })
