/** The hint's wire format: the pure codec lives in the core (core/hint-format.ts). */
export * from "../core/hint-format.js"
