/**
 * A client whose scope has closed answers UNAVAILABLE: a workload's retry timer that fires after the scope closed
 * must not get grpc-js's "Channel has been shut down" thrown at it.
 */
import { status } from "@grpc/grpc-js"
import { Transaction } from "@reef/proto"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { describe, expect, it } from "vitest"
import { ExecutionCallError, makeExecutionClient } from "./execution-client.js"

describe("execution client", () => {
  it("fails calls made after its scope closed with UNAVAILABLE, never by throwing", async () => {
    const scope = Effect.runSync(Scope.make())
    const client = await Effect.runPromise(
      makeExecutionClient({ address: "127.0.0.1:1", timeoutMs: 1_000 }).pipe(Scope.extend(scope))
    )
    await Effect.runPromise(Scope.close(scope, Exit.void))
    const outcome = await new Promise((resolve) => client.submitCallback(Transaction.fromPartial({}), resolve))
    expect(outcome).toBeInstanceOf(ExecutionCallError)
    expect((outcome as ExecutionCallError).code).toBe(status.UNAVAILABLE)
    const receipt = await Effect.runPromise(Effect.flip(client.getReceipt("x")))
    expect(receipt.code).toBe(status.UNAVAILABLE)
  })
})
