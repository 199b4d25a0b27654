import { reefProject } from "../../vitest.shared.ts"

export default reefProject("@reef/airdb", { timeoutMs: 60_000 })
