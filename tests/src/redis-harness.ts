/**
 * What the Redis tests share: a group of replica processes with Redis endpoints, redis-cli, and a recorded
 * GET / SET / INCR history of ioredis clients on every replica while one replica is killed, checked for
 * linearizability (linearizability.ts).
 *
 * A completed INCR that returned n is the compare-and-set n-1 → n on the register (the counter starts at a SET
 * to 0); INCRs go only through replicas that stay up, so none has an unknown outcome. A SET or GET that was
 * never sent (the killed replica's connection was gone) changed nothing; one sent and unanswered has an unknown
 * outcome.
 */
import { execFile } from "node:child_process"
import { checkLinearizable, formatEntry, type HistoryEntry, HistoryRecorder } from "@reef/replica"
import { Redis } from "ioredis"
import { type ActorProcess, type Harness, startActorProcess } from "./harness.js"

export const run = (file: string, args: ReadonlyArray<string>, timeoutMs = 120_000) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(file, args, { encoding: "utf8", timeout: timeoutMs }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : ((error as { code?: number }).code ?? 1), stdout, stderr })
    )
  )

/** The `host:port` a ready line names after `label` (resp, redis, kv). */
export const readyAddress = (process: ActorProcess, label: string): { host: string; port: number } => {
  const line = process.lines.find((l) => l.includes("reef ready:")) ?? ""
  const match = new RegExp(` ${label} (127\\.0\\.0\\.1):(\\d+)`).exec(line)
  if (match === null) throw new Error(`no ${label} address in: ${line}`)
  return { host: match[1]!, port: Number(match[2]) }
}

export const startReplicas = async (
  harness: Harness,
  options: { natsUrl: string; cluster: string; ids: ReadonlyArray<string>; extraArgs?: ReadonlyArray<string> }
): Promise<Map<string, ActorProcess>> => {
  const started = await Promise.all(
    options.ids.map((id) => startReplica(harness, { ...options, id }).then((p) => [id, p] as const))
  )
  return new Map(started)
}

export const startReplica = (
  harness: Harness,
  options: {
    natsUrl: string
    cluster: string
    ids: ReadonlyArray<string>
    id: string
    extraArgs?: ReadonlyArray<string>
  }
) =>
  startActorProcess(harness, {
    role: "replica",
    id: options.id,
    natsUrl: options.natsUrl,
    cluster: options.cluster,
    extraArgs: ["--members", options.ids.join(","), "--kv-port", "0", "--resp-port", "0", ...(options.extraArgs ?? [])]
  })

/**
 * Two ioredis clients per replica, `ops` operations each on keys k0..k2 and the counter c; `victim` is killed
 * with SIGKILL once a third of the operations are recorded. Throws on a violation; returns the operations checked.
 */
export const linearizableRun = async (options: {
  readonly ports: ReadonlyMap<string, number>
  readonly victim: ActorProcess
  readonly victimId: string
  readonly ops: number
}): Promise<{ operations: number; increments: number }> => {
  const { ports, victimId, ops } = options
  const recorder = new HistoryRecorder()
  const increments: Array<HistoryEntry> = []
  const start = performance.now()
  const now = () => performance.now() - start
  const first = [...ports.keys()].find((id) => id !== victimId)!
  const setup = new Redis({ port: ports.get(first)!, lazyConnect: true })
  await setup.connect()
  await setup.set("c", "0")
  increments.push({
    process: "setup",
    op: { _tag: "Set", key: "c", value: "0", output: { ok: true } },
    invokeMs: 0,
    completeMs: now()
  })
  setup.disconnect()

  let killed = false
  const client = async (process: string, replica: string) => {
    const redis = new Redis({
      port: ports.get(replica)!,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: () => null
    })
    redis.on("error", () => {})
    await redis.connect()
    for (let i = 0; i < ops; i++) {
      if (killed && replica === victimId) break
      const key = `k${i % 3}`
      const choice = (i * 7 + process.charCodeAt(process.length - 1)) % 3
      if (choice === 2 && replica !== victimId) {
        const invokeMs = now()
        const n = await redis.incr("c")
        increments.push({
          process,
          op: { _tag: "Cas", key: "c", expected: String(n - 1), value: String(n), output: { swapped: true } },
          invokeMs,
          completeMs: now()
        })
      } else if (choice === 0) {
        const value = `${process}-${i}`
        const id = recorder.invoke(process, { _tag: "Set", key, value }, now())
        try {
          await redis.set(key, value)
          recorder.complete(id, { ok: true }, now())
        } catch (error) {
          recorder.fail(id, !/enableOfflineQueue|writeable/i.test(String(error)))
        }
      } else {
        const id = recorder.invoke(process, { _tag: "Get", key }, now())
        try {
          const value = await redis.get(key)
          recorder.complete(id, value === null ? { found: false } : { found: true, value }, now())
        } catch {
          recorder.fail(id, true)
        }
      }
    }
    redis.disconnect()
  }
  const clients = [...ports.keys()].flatMap((replica) => [
    client(`${replica}a`, replica),
    client(`${replica}b`, replica)
  ])
  const killer = (async () => {
    while (recorder.entries().length < (ops * ports.size * 2) / 3) await new Promise((r) => setTimeout(r, 20))
    killed = true
    options.victim.child.kill("SIGKILL")
    await options.victim.exited
  })()
  await Promise.all([...clients, killer])

  const result = checkLinearizable([...recorder.entries(), ...increments])
  if (!result.ok) {
    throw new Error(
      `${result._tag} on ${result.key}: ${result.reason}\n${result.minimalWindow.map(formatEntry).join("\n")}`
    )
  }
  return { operations: result.operations, increments: increments.length - 1 }
}
