/**
 * "Acknowledged writes survive": a direct check of a history against the values its keys hold at the end,
 * with a report that names the write that was lost. Linearizability implies it when the final reads are in
 * the history; this says plainly what went wrong where the checker's window would need reading.
 *
 * For each key, take the acknowledged write that completed last (a Set, a swapped CAS, a Delete). The final
 * value must come from that write or from one not over before it began (concurrent with it or later,
 * including writes whose outcome is unknown): anything else means an acknowledged write was undone.
 */
import { formatEntry, type HistoryEntry } from "./history.js"

export interface LostWrite {
  readonly key: string
  /** The final value (`null`: absent). */
  readonly final: string | null
  /** The acknowledged write that should have left its mark. */
  readonly lost: HistoryEntry
}

/** What a write leaves in its key: a value, `null` for a delete, `undefined` when it certainly changed nothing. */
const written = (entry: HistoryEntry): string | null | undefined => {
  const { op } = entry
  switch (op._tag) {
    case "Set":
      return op.value
    case "Delete":
      return null
    case "Cas":
      return op.output === undefined || op.output.swapped ? op.value : undefined
    case "Get":
      return undefined
  }
}

const acknowledged = (entry: HistoryEntry): boolean => entry.completeMs !== undefined && written(entry) !== undefined

/** The acknowledged writes whose effect is gone from `finalValues` (keys absent from it are not checked). */
export const lostWrites = (
  entries: ReadonlyArray<HistoryEntry>,
  finalValues: ReadonlyMap<string, string | null>
): ReadonlyArray<LostWrite> => {
  const lost: Array<LostWrite> = []
  for (const [key, final] of finalValues) {
    const writes = entries.filter((e) => e.op.key === key && written(e) !== undefined)
    let last: HistoryEntry | undefined
    for (const w of writes) if (acknowledged(w) && (last === undefined || w.completeMs! > last.completeMs!)) last = w
    if (last === undefined) continue
    const explains = writes.some((w) => written(w) === final && (w.completeMs ?? Infinity) >= last.invokeMs)
    if (!explains) lost.push({ key, final, lost: last })
  }
  return lost
}

export const formatLostWrite = (l: LostWrite): string =>
  `key ${JSON.stringify(l.key)} ends ${l.final === null ? "absent" : JSON.stringify(l.final)}, losing ${formatEntry(l.lost)}`
