/**
 * A client of reef.v1.Backup for tools (the CLI's `reef backup status|watch`, tests): one call per use, the
 * channel closed after it.
 */
import * as grpc from "@grpc/grpc-js"
import { grpcClientCredentials } from "@reef/grpc/security"
import { BackupClient, type BackupStatus, type BlockReplayed } from "@reef/proto"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"

export class BackupClientError extends Data.TaggedError("BackupClientError")<{
  readonly address: string
  readonly cause: unknown
}> {
  override get message() {
    return `reef.v1.Backup at ${this.address}: ${String((this.cause as Error)?.message ?? this.cause)}`
  }
}

const withClient = <A>(address: string, use: (client: BackupClient) => Effect.Effect<A, BackupClientError>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => new BackupClient(address, grpcClientCredentials())),
    use,
    (client) => Effect.sync(() => client.close())
  )

export const backupStatus = (address: string, timeoutMs = 5000): Effect.Effect<BackupStatus, BackupClientError> =>
  withClient(address, (client) =>
    Effect.async<BackupStatus, BackupClientError>((resume) => {
      client.status({}, new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (error, response) =>
        resume(error ? Effect.fail(new BackupClientError({ address, cause: error })) : Effect.succeed(response))
      )
    })
  )

/** Calls `onBlock` for every block the backup replays (after those since `fromBlock`), until the stream ends. */
export const watchReplay = (
  address: string,
  fromBlock: number,
  onBlock: (block: BlockReplayed) => Effect.Effect<void>
): Effect.Effect<void, BackupClientError> =>
  withClient(address, (client) =>
    Effect.async<void, BackupClientError>((resume) => {
      const call = client.watchReplay({ fromBlock })
      call.on("data", (block: BlockReplayed) => Effect.runFork(onBlock(block)))
      call.on("error", (error) => resume(Effect.fail(new BackupClientError({ address, cause: error }))))
      call.on("end", () => resume(Effect.void))
      return Effect.sync(() => call.cancel())
    })
  )
