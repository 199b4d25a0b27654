/** Which actors `reef up` starts, in order, with the role-specific flags each one needs. */
export interface PlannedActor {
  readonly role: string
  readonly id: string
  readonly args: ReadonlyArray<string>
}

export interface PlanOptions {
  readonly counters: number
  /** Replicas of the POPUC KV group (N = 2t+1; 0 for none). */
  readonly replicas: number
  /** gRPC ports of the replicas' KV service, one per replica. */
  readonly kvPorts: ReadonlyArray<number>
}

export const replicaIds = (n: number): ReadonlyArray<string> => Array.from({ length: n }, (_, i) => `r${i + 1}`)

export const clusterPlan = (options: PlanOptions): ReadonlyArray<PlannedActor> => {
  const replicas = replicaIds(options.replicas)
  return [
    { role: "gateway", id: "gw1", args: [] },
    ...Array.from({ length: options.counters }, (_, i) => ({ role: "counter", id: `c${i + 1}`, args: [] })),
    ...replicas.map((id, i) => ({
      role: "replica",
      id,
      args: ["--group", "kv", "--members", replicas.join(","), "--kv-port", String(options.kvPorts[i]!)]
    }))
  ]
}
