/**
 * Text order with numbers compared by value (r2 before r10). One collator serves every comparison:
 * `localeCompare` with options builds a new one per call, which made sorting a status table slow.
 */
export const naturalOrder: (a: string, b: string) => number = new Intl.Collator("en", { numeric: true }).compare
