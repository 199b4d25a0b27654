import { reefProject } from "../../vitest.shared.ts"

export default reefProject("@reef/grpc")
