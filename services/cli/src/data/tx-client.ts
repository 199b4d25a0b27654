/**
 * What `reef tx` commands do (loaded only when one runs): find the coordinator, build and sign a transaction,
 * and word the coordinator's answers for a person.
 */

import { createHash, randomBytes } from "node:crypto"
import { status } from "@grpc/grpc-js"
import { type ExecutionCallError, makeExecutionClient } from "@reef/coordinator"
import { RejectReason, TokenTransfer, type Transaction, TransactionBody, YcsbRmw } from "@reef/proto"
import { ed25519Signer, signingKeyFromSeed, TOKEN_CONTRACT, YCSB_CONTRACT } from "@reef/remora"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { ClusterStateError, NotFoundError, UsageError } from "../cli/errors.js"
import { UnreachableError } from "./client.js"
import type { ClientContext } from "./command.js"
import { failedToConnect } from "./gateway.js"
import { inNamespace, OBJECT_NAMESPACES, objectView } from "./object-view.js"

/** The coordinator refused the transaction at admission (it never reached a block). */
export class TxRejectedError extends Data.TaggedError("TxRejectedError")<{
  readonly txId: string
  readonly reason: string
  readonly detail: string
}> {
  override get message() {
    return `transaction ${this.txId === "" ? "(no id)" : this.txId} rejected (${this.reason}): ${this.detail}`
  }
}

/** `REJECT_REASON_DUPLICATE_ID` → `DUPLICATE_ID`. */
export const reasonName = (reason: RejectReason): string =>
  (RejectReason[reason] ?? String(reason)).replace(/^REJECT_REASON_/, "")

/** An object is between two owners (a lease transfer, or a recovery handing a dead worker's objects on). */
export class ObjectMovingError extends Data.TaggedError("ObjectMovingError")<{ readonly message: string }> {}

/**
 * A coordinator call's failure in one line. Only a call that never reached the coordinator blames the
 * connection; an UNAVAILABLE the coordinator sent is its answer (an object on the move: retry; recovering).
 */
export const explainExecutionError =
  (context: Pick<ClientContext, "gatewaySource">, address: string) => (e: ExecutionCallError) => {
    if (failedToConnect(e)) {
      return new UnreachableError({
        message: `cannot reach the coordinator at ${address} (${e.details.split("\n")[0]}): is it running? (${context.gatewaySource === "flag" ? "check --gateway" : "reef status lists it"})`
      })
    }
    const moving = /^(\S+) is being transferred to (\S+?);/.exec(e.details)
    if (moving !== null) {
      return new ObjectMovingError({
        message: `${moving[1]} is moving to ${moving[2]} (a lease transfer or a recovery): retry in a moment`
      })
    }
    if (e.code === status.UNAVAILABLE) {
      return new UnreachableError({ message: `the coordinator at ${address} cannot answer now: ${e.details}; retry` })
    }
    if (e.code === status.NOT_FOUND) return new NotFoundError({ message: e.details })
    return e
  }

/** A client of the chosen coordinator: --execution, else the one presence names. */
export const executionClient = (
  context: ClientContext,
  input: { readonly execution?: string | undefined; readonly coordinator?: string | undefined }
) =>
  Effect.gen(function* () {
    let address = input.execution
    if (address === undefined) {
      const { members, endpointsOf } = yield* Effect.promise(() => import("./gateway.js"))
      const all = endpointsOf(yield* members(context, "coordinator"), "coordinator", "grpc")
      if (all.length === 0) {
        return yield* new ClusterStateError({
          message: "no joined coordinator in this cluster (start one with 'reef up' or 'reef run coordinator')"
        })
      }
      const chosen = input.coordinator === undefined ? all[0] : all.find((c) => c.id === input.coordinator)
      if (chosen === undefined) {
        return yield* new UsageError({
          message: `--coordinator ${input.coordinator}: no such coordinator (coordinators: ${all.map((c) => c.id).join(", ")})`
        })
      }
      address = chosen.address
    }
    const client = yield* makeExecutionClient({ address, timeoutMs: context.timeoutMs })
    return { client, explain: explainExecutionError(context, address) }
  })

type Located = Effect.Effect.Success<ReturnType<typeof executionClient>>

export interface SubmitInput {
  readonly kind: "ycsb" | "token" | "raw"
  readonly keys?: ReadonlyArray<string> | undefined
  readonly field: number
  readonly data: string
  readonly from?: string | undefined
  readonly to?: string | undefined
  readonly amount: number
  readonly contract?: string | undefined
  readonly read?: ReadonlyArray<string> | undefined
  readonly write?: ReadonlyArray<string> | undefined
  readonly "args-hex"?: string | undefined
  readonly id?: string | undefined
  readonly "key-seed": string
  readonly "bad-signature": boolean
}

/** The transaction the options describe, signed with the key of --key-seed. */
export const buildTransaction = (input: SubmitInput): Transaction => {
  const id = input.id ?? `cli-${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`
  let readSet: ReadonlyArray<string>
  let writeSet: ReadonlyArray<string>
  let contract: string
  let args: Uint8Array
  if (input.kind === "ycsb") {
    readSet = writeSet = input.keys ?? []
    contract = YCSB_CONTRACT
    args = YcsbRmw.encode({ field: input.field, data: Buffer.from(input.data, "utf8") }).finish()
  } else if (input.kind === "token") {
    readSet = writeSet = [input.from!, input.to!]
    contract = TOKEN_CONTRACT
    args = TokenTransfer.encode({ from: input.from!, to: input.to!, amount: input.amount }).finish()
  } else {
    readSet = input.read ?? []
    writeSet = input.write ?? []
    contract = input.contract!
    args = Buffer.from(input["args-hex"] ?? "", "hex")
  }
  const body = TransactionBody.encode({
    id,
    readSet: [...readSet],
    writeSet: [...writeSet],
    call: { contract, args: Buffer.from(args) },
    statelessCostUs: 0,
    statefulCostUs: 0
  }).finish()
  const seed = createHash("sha256").update(input["key-seed"]).digest()
  return ed25519Signer(signingKeyFromSeed(seed))(body, !input["bad-signature"])
}

export const submitOne = ({ client, explain }: Located, tx: Transaction, wait: boolean) =>
  client.submitTransaction(tx, wait).pipe(
    Effect.mapError(explain),
    Effect.flatMap((r) =>
      r.outcome?.$case === "rejected"
        ? Effect.fail(
            new TxRejectedError({
              txId: r.txId,
              reason: reasonName(r.outcome.value.reason),
              detail: r.outcome.value.message
            })
          )
        : Effect.succeed({ txId: r.txId, receipt: r.outcome?.$case === "receipt" ? r.outcome.value : undefined })
    )
  )

export const receiptOf = ({ client, explain }: Located, txId: string) =>
  client.getReceipt(txId).pipe(
    Effect.mapError((e) => (e.code === status.NOT_FOUND ? new NotFoundError({ message: e.details }) : explain(e))),
    Effect.map((r) => ({ txId, receipt: r.receipt }))
  )

/** An object's latest value, decoded by its contract; "not found" for a key that names no object. */
export const objectOf = ({ client, explain }: Located, key: string) =>
  client.getObject(key).pipe(
    Effect.mapError(explain),
    Effect.filterOrFail(
      // Every key of a namespace exists from the start (the paper's (k, 0)); other keys exist once written.
      (r) => inNamespace(key) || r.version > 0,
      () =>
        new NotFoundError({
          message: `object ${key} not found: no contract's namespace holds it (${OBJECT_NAMESPACES.join(", ")}) and nothing wrote it`
        })
    ),
    Effect.map((r) => ({ ...r, view: objectView(key, r.value) }))
  )

export const stateOf = ({ client, explain }: Located) => client.state.pipe(Effect.mapError(explain))
