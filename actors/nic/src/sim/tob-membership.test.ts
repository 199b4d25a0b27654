/**
 * Membership changes decided through consensus: "Recoveries in name are treated as process joins resulting
 * from membership changes proposed and agreed upon through ckcuc". Replace, grow and shrink the group; every
 * process runs every instance with the same members, new members join by state transfer, removed ones leave.
 * 320 seeds.
 */
import { describeSeedSuites, type SeedSuite } from "./seed-suite.js"

const suite: SeedSuite = { scenario: "tob-membership", seedsPerN: 80 }

describeSeedSuites("simulated TOB, membership change", [suite])
