/**
 * Remora in one test process: a coordinator and workers, each with its own kernel (its own NATS connection)
 * on a spawned nats-server, and helpers to submit signed workloads and compare the executed state with the
 * sequential reference executor.
 */
import {
  type ConsensusSource,
  type CoordinatorHandle,
  type RunCoordinatorOptions,
  runCoordinator
} from "@reef/coordinator"
import { type Kernel, natsKernelLayer } from "@reef/kernel"
import type { CommitEvent, Transaction } from "@reef/proto"
import {
  admit,
  bodySource,
  ed25519Signer,
  Prng,
  ReferenceExecutor,
  SignatureVerifier,
  signingKeyFromSeed,
  type TxMeta,
  transactionStream,
  type WorkloadSpec
} from "@reef/remora"
import { type RunWorkerOptions, runWorker, type WorkerHandle } from "@reef/worker"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"

export interface InProcessCluster {
  readonly coordinator: CoordinatorHandle
  readonly workers: ReadonlyArray<WorkerHandle>
  readonly commits: Array<CommitEvent>
  readonly close: () => Promise<void>
}

/** Runs `effect` with `layer`'s services, both living until `scope` closes (Effect.provide would close the layer
 *  as soon as the effect returns). */
const inScope = async <A, R>(
  scope: Scope.CloseableScope,
  layer: Layer.Layer<R, unknown>,
  effect: Effect.Effect<A, unknown, R | Scope.Scope>
): Promise<A> => {
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  return Effect.runPromise(Scope.extend(Effect.provide(effect, context), scope))
}

/** Starts a coordinator and `workers` workers in this process, each on its own kernel. */
export const startInProcessCluster = async (options: {
  readonly natsUrl: string
  readonly cluster: string
  readonly coordinator: RunCoordinatorOptions
  readonly consensus: Layer.Layer<ConsensusSource>
  readonly workers: ReadonlyArray<RunWorkerOptions>
}): Promise<InProcessCluster> => {
  const scopes: Array<Scope.CloseableScope> = []
  const kernel = (name: string) =>
    natsKernelLayer({ servers: options.natsUrl, name }, { cluster: options.cluster }) as Layer.Layer<Kernel>
  const workers: Array<WorkerHandle> = []
  for (const w of options.workers) {
    const scope = Effect.runSync(Scope.make())
    scopes.push(scope)
    workers.push(await inScope(scope, kernel(`worker-${w.id}`), runWorker(w)))
  }
  const scope = Effect.runSync(Scope.make())
  scopes.push(scope)
  const coordinator = await inScope(
    scope,
    Layer.merge(kernel("coordinator"), options.consensus),
    runCoordinator(options.coordinator)
  )
  const commits: Array<CommitEvent> = []
  coordinator.driver.watch((e) => commits.push(e))
  return {
    coordinator,
    workers,
    commits,
    close: async () => {
      for (const s of scopes.reverse()) await Effect.runPromise(Scope.close(s, Exit.void))
    }
  }
}

export interface SignedWorkload {
  readonly txs: ReadonlyArray<Transaction>
  readonly byId: ReadonlyMap<string, Transaction>
  readonly invalid: number
}

/** `n` signed transactions of `spec`, a share with bad signatures, deterministic from `seed`. */
export const signedWorkload = (
  spec: WorkloadSpec,
  n: number,
  seed: number,
  invalidShare: number,
  prefix = "t"
): SignedWorkload => {
  const prng = new Prng(seed)
  const key = signingKeyFromSeed(new Uint8Array(32).fill(seed & 0xff))
  const next = transactionStream(bodySource(spec, prng.fork()), ed25519Signer(key), prng.fork(), invalidShare, prefix)
  const txs: Array<Transaction> = []
  let invalid = 0
  for (let i = 0; i < n; i++) {
    const { tx, valid } = next()
    if (!valid) invalid++
    txs.push(tx)
  }
  const byId = new Map(txs.map((tx) => [(admit(tx) as { meta: TxMeta }).meta.id, tx]))
  return { txs, byId, invalid }
}

/** The reference executor's state hash over `order` (transaction ids in consensus order). */
export const referenceHash = (order: ReadonlyArray<string>, byId: ReadonlyMap<string, Transaction>): string => {
  const reference = new ReferenceExecutor()
  const verifier = new SignatureVerifier()
  for (const id of order) {
    const tx = byId.get(id)
    if (tx === undefined) throw new Error(`committed transaction ${id} was never submitted`)
    const a = admit(tx)
    if (!a.ok) throw new Error(`committed transaction ${id} is not admissible: ${a.rejection.message}`)
    reference.apply(a.meta as TxMeta<Transaction>, verifier.verify(tx.publicKey, tx.body, tx.signature))
  }
  return reference.digest().hex()
}

/** Transaction ids in consensus order, from the commit events. */
export const committedOrder = (commits: ReadonlyArray<CommitEvent>): Array<string> =>
  [...commits].sort((a, b) => a.height - b.height).flatMap((c) => c.txIds)
