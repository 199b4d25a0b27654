import { reefProject } from "../vitest.shared.ts"

// Every file here starts a nats-server and real actor processes; on a 2-core machine two such clusters at once
// starve each other's consensus timers, so the files run one after another.
export default reefProject("@reef/tests", { sequential: true })
