/**
 * Shared pieces of the cross-package tests: a scope that lives for one test file (a nats-server, actor
 * processes), a kernel client on the real server, and helpers to wait for things without timing thresholds.
 */
import type { ChildProcess } from "node:child_process"
import { startReefChild } from "@reef/devkit"
import { type Kernel, type Nats, type NatsServer, natsKernelLayer, startNatsServer } from "@reef/kernel"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"

export interface Harness {
  readonly run: <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Promise<A>
  readonly close: () => Promise<void>
}

/** A scope for resources shared by the tests of one file; close it in afterAll. */
export const makeHarness = (): Harness => {
  const scope = Effect.runSync(Scope.make())
  return {
    run: (effect) => Effect.runPromise(Scope.extend(effect, scope)),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

export const startNats = (harness: Harness): Promise<NatsServer> => harness.run(startNatsServer({ jetstream: true }))

/** A kernel client in the test process on the real server. */
export const kernelClient = (url: string, cluster: string, overrides: { askTimeoutMs?: number } = {}) =>
  ManagedRuntime.make(
    natsKernelLayer({ servers: url, name: "reef-test" }, { cluster, ...overrides }) as Layer.Layer<Kernel | Nats>
  )

export interface ActorProcess {
  readonly lines: Array<string>
  readonly child: ChildProcess
  /** Resolves with the exit code (or signal) once the process has exited. */
  readonly exited: Promise<number | string | null>
}

/** Starts `reef run <role> --id <id>` as its own OS process; resolves once it printed its ready line. */
export const startActorProcess = (
  harness: Harness,
  options: {
    readonly role: string
    readonly id: string
    readonly natsUrl: string
    readonly cluster: string
    readonly env?: Record<string, string>
    readonly extraArgs?: ReadonlyArray<string>
    /** Runs it through this command (`ip netns exec <netns>`: on a host of hosts/hosts.ts). */
    readonly prefix?: ReadonlyArray<string>
    /** How long it may take to print its ready line (a liveness bound: long runs on a loaded machine). */
    readonly startTimeoutMs?: number
  }
): Promise<ActorProcess> => {
  const lines: Array<string> = []
  return harness
    .run(
      startReefChild({
        name: `${options.role}/${options.id}`,
        args: [
          "run",
          options.role,
          "--id",
          options.id,
          "--nats",
          options.natsUrl,
          "--cluster",
          options.cluster,
          ...(options.extraArgs ?? [])
        ],
        env: { OTEL_SDK_DISABLED: "true", ...options.env },
        ...(options.prefix === undefined ? {} : { prefix: options.prefix }),
        ...(options.startTimeoutMs === undefined ? {} : { startTimeoutMs: options.startTimeoutMs }),
        onLine: (line) => lines.push(line)
      }).pipe(
        // A process that did not start says why in its output: keep the end of it in the failure.
        Effect.mapError((error) => new Error(`${error.message}; its last output:\n${lines.slice(-30).join("\n")}`))
      )
    )
    .then((child) => ({
      lines,
      child,
      exited: new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode ?? child.signalCode)
        else child.once("exit", (code, signal) => resolve(code ?? signal))
      })
    }))
}

/** Retries `effect` until it succeeds, for at most `seconds` (a liveness bound, not a performance claim). */
export const eventually = <A, E, R>(effect: Effect.Effect<A, E, R>, seconds = 20) =>
  effect.pipe(Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo(`${seconds} seconds`))))
