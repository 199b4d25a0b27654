/**
 * The chain's pure surface (`@reef/chain/core`): key and hint formats, hint errors and transactions as plain
 * data, with no I/O, clock or runtime, so that other packages' cores (the backup's follower) may import it.
 */
export * from "./bytes.js"
export * from "./hint-error.js"
export * from "./hint-format.js"
export * from "./tx.js"
