/** Which actors `reef up` starts, in order. */
export interface PlannedActor {
  readonly role: string
  readonly id: string
}

export const clusterPlan = (options: { readonly counters: number }): ReadonlyArray<PlannedActor> => [
  { role: "gateway", id: "gw1" },
  ...Array.from({ length: options.counters }, (_, i) => ({ role: "counter", id: `c${i + 1}` }))
]
