/**
 * @reef/stats: small pure statistics every package may use (no dependencies, no I/O): the one percentile
 * convention (nearest rank).
 */
export { ascending, percentile, percentileOfSorted } from "./percentile.js"
