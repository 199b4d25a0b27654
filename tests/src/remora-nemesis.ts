/**
 * A nemesis for Remora (issue 21), in the style of popuc-nemesis.ts: a coordinator (`--data-dir`) and three
 * workers as real processes over a spawned nats-server, concurrent signed submitters (token transfers over 50
 * skewed accounts, YCSB writes, 3% bad signatures), while faults are injected one at a time:
 *
 *   worker-kill       kill -9 a worker, restart it with the same id (a new incarnation)
 *   coordinator-kill  kill -9 the coordinator, restart it on its data directory
 *   worker-pause      SIGSTOP a worker for 1-7 s (past 5 s presence says it left: a recovery), SIGCONT it
 *   nats-restart      kill -9 the nats-server, start it again on the same port
 *
 * The first four faults are one of each kind (in a seeded order), then random ones until the time is up.
 *
 * `elastic`: the coordinator autoscales (`--autoscale 1..3`; the three workers start as one active and two
 * spares) and the submitters alternate loud and quiet stretches, so the pool grows and shrinks under the faults;
 * a worker it retires stops (exit 0) and is started again as a spare, as a supervisor would.
 * A `site` (hosts/remora-hosts.test.ts) places the coordinator and the workers on hosts of a NATS cluster
 * instead, where two more kinds cut a host off at the link proxy and heal it:
 *
 *   worker-partition       a worker's host, 2-8 s (past 5 s presence says the worker left: a recovery)
 *   coordinator-partition  the coordinator's host, 2-8 s (its submitters still reach it; its workers do not)
 *
 * A submitter whose outcome is unknown (a broken stream, UNAVAILABLE while the coordinator recovers) submits the
 * same transaction again: idempotent submit must answer with its one receipt. At the end: every transaction has
 * a receipt and every receipt seen for an id is the same; seqs are exactly 1..N (no id committed or executed
 * twice); the executed state equals the sequential reference execution of the receipts' order; GetReceipt
 * answers every receipt identically. `pnpm test:nemesis remora --minutes N` (remora-nemesis-main.ts) runs it
 * longer and prints the figures; the CI test runs it briefly.
 */
import { mkdir, mkdtemp, readdir, readFile, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  ExecutionCallError,
  makeExecutionClient,
  type RemoraClient,
  receiptOrder,
  referenceState,
  type Submitted
} from "@reef/coordinator"
import { freePort } from "@reef/kernel"
import { type Receipt, RejectReason, type Transaction, TxStatus } from "@reef/proto"
import {
  admit,
  bodySource,
  ed25519Signer,
  Prng,
  type ReferenceExecutor,
  signingKeyFromSeed,
  type TxMeta,
  transactionStream,
  type WorkloadSpec
} from "@reef/remora"
import { auditHash } from "@reef/worker"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { type ActorProcess, type Harness, makeHarness, startActorProcess, startNats } from "./harness.js"
import { prng } from "./popuc-harness.js"

export type RemoraFault =
  | "worker-kill"
  | "coordinator-kill"
  | "worker-pause"
  | "nats-restart"
  | "worker-partition"
  | "coordinator-partition"
const FAULTS: ReadonlyArray<RemoraFault> = ["worker-kill", "coordinator-kill", "worker-pause", "nats-restart"]

/** Where the processes run: one nats-server on loopback (the default), or hosts of a NATS cluster. */
export interface RemoraSite {
  /** Actor `x1` or `w1`..: its host's NATS URL, the address its ports listen on, the command prefix to run it there. */
  readonly placement: (actor: string) => {
    readonly natsUrl: string
    readonly address: string
    readonly prefix?: ReadonlyArray<string>
  }
  /** The servers a nats-restart kills (one at random). */
  readonly servers: ReadonlyArray<{
    readonly name: string
    readonly kill: Effect.Effect<void, unknown>
    readonly restart: Effect.Effect<void, unknown>
  }>
  /** Cuts the host of `actor` off (`true`) or heals it; the partition kinds need it. */
  readonly partition?: (actor: string, cut: boolean) => Effect.Effect<void, unknown>
  /** Resolves once the site is whole again after a heal (a NATS cluster's routes). */
  readonly healed?: Effect.Effect<void, unknown>
}

export interface RemoraNemesisOptions {
  /** How long to inject faults (ms); the first four (one of each kind) run whatever it is. */
  readonly faultsMs: number
  readonly seed: number
  readonly submitters?: number
  /** Unanswered submissions per submitter. */
  readonly inFlight?: number
  /** The first faults are one of each of these kinds; then random ones of them (default: the four above). */
  readonly faultKinds?: ReadonlyArray<RemoraFault>
  readonly site?: (harness: Harness) => Promise<RemoraSite>
  readonly say?: (line: string) => void
  /** The pool follows a load that rises and falls (see above). */
  readonly elastic?: boolean
}

export interface RemoraNemesisReport {
  readonly seed: number
  readonly elapsedMs: number
  readonly transactions: number
  /** Submissions answered UNAVAILABLE / broken streams / timeouts, each followed by a resubmission. */
  readonly resubmissions: number
  readonly faults: Readonly<Partial<Record<RemoraFault, number>>>
  /** Recoveries the coordinator logged (worker losses and restarts), and its own restarts. */
  readonly recoveries: number
  readonly coordinatorRestarts: number
  /** Elastic: spares the coordinator activated, and workers it retired (from its log, every incarnation). */
  readonly scaleOuts: number
  readonly scaleIns: number
  /** Per fault: from its heal (restart, SIGCONT, server back) to the next receipt. */
  readonly resumeMs: ReadonlyArray<{ readonly fault: RemoraFault; readonly ms: number }>
  /** A restarted coordinator: from its start to serving again (its own log line). */
  readonly coordinatorRestartToServingMs: ReadonlyArray<number>
  /** The longest time without a new receipt while submissions were waiting. */
  readonly longestStallMs: number
  readonly problems: ReadonlyArray<string>
  readonly events: ReadonlyArray<string>
}

const RECEIPT_FIELDS = ["txId", "status", "seq", "height", "blockDigest", "worker", "detail"] as const
const sameReceipt = (a: Receipt, b: Receipt) =>
  RECEIPT_FIELDS.every((f) => a[f] === b[f]) && a.leaseTransfers === b.leaseTransfers

/** An endless signed workload: token transfers and YCSB writes, alternating, 3% bad signatures. */
const workloadStream = (seed: number, prefix: string) => {
  const stream = (spec: WorkloadSpec, s: number, p: string) => {
    const r = new Prng(s)
    const key = signingKeyFromSeed(new Uint8Array(32).fill(s & 0xff))
    return transactionStream(bodySource(spec, r.fork()), ed25519Signer(key), r.fork(), 0.03, p)
  }
  const tokens = stream(
    { kind: "token", accounts: 50, zipf: 0.9, maxAmount: 100, statelessCostUs: 0, statefulCostUs: 0 },
    seed,
    `${prefix}t-`
  )
  const ycsb = stream(
    { kind: "ycsb", keys: 200, objectsPerTx: 3, zipf: 0.8, statelessCostUs: 0, statefulCostUs: 0 },
    seed + 1,
    `${prefix}y-`
  )
  let n = 0
  return () => (n++ % 2 === 0 ? tokens() : ycsb()).tx
}

const txIdOf = (tx: Transaction) => (admit(tx) as { meta: TxMeta }).meta.id

/**
 * Elastic runs: 1..3 workers; the load unit is a transaction (their synthetic cost is 0, and the load counts each
 * as at least 1), so a loud stretch (100 in flight per submitter) is far above 60 per worker and a quiet one (2)
 * far below 10.
 */
const ELASTIC_ARGS = [
  ...["--autoscale", "1..3", "--autoscale-high", "60", "--autoscale-low", "10"],
  ...["--autoscale-sustain", "2", "--autoscale-cooldown-ms", "1000", "--autoscale-every-ms", "250"]
]
const QUIET_IN_FLIGHT = 2
/** The coordinator's log lines of a spare activated and of a worker retired. */
const SCALE_OUT = /autoscaler: scale-out .* joins the pool/
const SCALE_IN = /autoscaler: \S+ \(incarnation \S+\) retired/

/** A restart on a loaded machine (other tests, other processes) may take long: a liveness bound only. */
const START_TIMEOUT_MS = 120_000

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Waits for `condition`, at most `ms` (a liveness bound, not a performance claim). */
const until = async (condition: () => boolean, ms: number, what: string) => {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`)
    await sleep(50)
  }
}

export const runRemoraNemesis = async (options: RemoraNemesisOptions): Promise<RemoraNemesisReport> => {
  const harness = makeHarness()
  try {
    return await nemesis(harness, options)
  } finally {
    await harness.close()
  }
}

const nemesis = async (harness: Harness, options: RemoraNemesisOptions): Promise<RemoraNemesisReport> => {
  const began = performance.now()
  const random = prng(options.seed)
  const between = (lo: number, hi: number) => Math.round(lo + random() * (hi - lo))
  const events: Array<string> = []
  const say = (line: string) => {
    events.push(`${((performance.now() - began) / 1000).toFixed(1)}s ${line}`)
    options.say?.(line)
  }
  const cluster = `rnemesis${options.seed}`
  const site = await (options.site ?? localSite)(harness)
  const port = await Effect.runPromise(freePort)
  const dataDir = await mkdtemp(join(tmpdir(), "reef-remora-nemesis-"))
  const auditDir = join(dataDir, "audit")
  await mkdir(auditDir, { recursive: true })
  const coordinatorLines: Array<string> = []
  // Every process started, for its log when a check fails.
  const started: Array<{ readonly name: string; readonly process: ActorProcess }> = []
  const keep = (name: string) => (p: ActorProcess) => {
    started.push({ name: `${name}-${started.length}`, process: p })
    return p
  }
  const startCoordinator = () =>
    startActorProcess(harness, {
      role: "coordinator",
      id: "x1",
      natsUrl: site.placement("x1").natsUrl,
      cluster,
      ...prefixOf(site, "x1"),
      extraArgs: [
        ...["--execution-port", String(port), "--host", site.placement("x1").address, "--data-dir", dataDir],
        ...["--window-ms", "100", "--epoch-ms", "500"],
        ...(options.elastic === true ? ELASTIC_ARGS : [])
      ],
      startTimeoutMs: START_TIMEOUT_MS
    })
      .then(keep("x1"))
      .then((p) => {
        // Lines of every incarnation, in order.
        const from = p.lines.length
        coordinatorLines.push(...p.lines.slice(0, from))
        const push = p.lines.push.bind(p.lines)
        p.lines.push = (...items: Array<string>) => {
          coordinatorLines.push(...items)
          return push(...items)
        }
        return p
      })
  const startWorker = (id: string) =>
    startActorProcess(harness, {
      role: "worker",
      id,
      natsUrl: site.placement(id).natsUrl,
      cluster,
      ...prefixOf(site, id),
      extraArgs: ["--coordinator", "x1", "--cores", "4"],
      env: { REEF_REMORA_AUDIT_DIR: auditDir },
      startTimeoutMs: START_TIMEOUT_MS
    }).then(keep(id))
  const workerIds = ["w1", "w2", "w3"]
  const [first, ...initialWorkers] = await Promise.all([startCoordinator(), ...workerIds.map(startWorker)])
  let coordinator: ActorProcess = first!
  const workers = new Map<string, ActorProcess>(workerIds.map((id, i) => [id, initialWorkers[i]!]))
  // Elastic: a worker the coordinator retired stops by itself; a supervisor starts it again (a spare).
  const restarting = new Set<string>()
  const alive = (id: string) => {
    const c = workers.get(id)!.child
    return !restarting.has(id) && c.exitCode === null && c.signalCode === null
  }
  const superviseRetirement = (id: string, p: ActorProcess): void => {
    void p.exited.then(async (code) => {
      if (code !== 0 || workers.get(id) !== p || !p.lines.some((l) => l.includes("retired by coordinator"))) return
      restarting.add(id)
      say(`${id}: retired by the coordinator, stopped; started again as a spare`)
      const next = await startWorker(id)
      workers.set(id, next)
      restarting.delete(id)
      superviseRetirement(id, next)
    })
  }
  if (options.elastic === true) for (const [id, p] of workers) superviseRetirement(id, p)
  const client: RemoraClient = await harness.run(
    makeExecutionClient({ address: `${site.placement("x1").address}:${port}`, timeoutMs: 30_000 })
  )
  await Effect.runPromise(
    client.state.pipe(
      Effect.filterOrFail((s) => s.workers.length === (options.elastic === true ? 1 : workerIds.length)),
      Effect.retry(Schedule.spaced("200 millis").pipe(Schedule.upTo("60 seconds")))
    )
  )
  say(`coordinator x1 and ${workerIds.join(", ")} up`)

  // ---- submitters ----
  const byId = new Map<string, Transaction>()
  const receipts = new Map<string, Receipt>()
  const problems: Array<string> = []
  let resubmissions = 0
  let lastReceiptAt = performance.now()
  let longestStallMs = 0
  let generating = true
  let outstanding = 0
  const onReceipt = (id: string, r: Receipt) => {
    const now = performance.now()
    longestStallMs = Math.max(longestStallMs, now - lastReceiptAt)
    lastReceiptAt = now
    const known = receipts.get(id)
    if (known === undefined) receipts.set(id, r)
    else if (!sameReceipt(known, r)) {
      problems.push(`${id}: two different receipts (seq ${known.seq} on ${known.worker}, seq ${r.seq} on ${r.worker})`)
    }
  }
  const submit = (tx: Transaction, id: string, done: () => void) => {
    client.submitCallback(tx, (o: Submitted | ExecutionCallError) => {
      if (o instanceof ExecutionCallError || (o._tag === "Rejected" && retryable(o.rejection.reason))) {
        // Unknown outcome, or not now: the same transaction again (idempotent).
        resubmissions++
        setTimeout(() => submit(tx, id, done), 200)
        return
      }
      if (o._tag === "Rejected")
        problems.push(`${id} refused: ${RejectReason[o.rejection.reason]} ${o.rejection.message}`)
      else onReceipt(id, o.receipt)
      done()
    })
  }
  const retryable = (r: RejectReason) =>
    r === RejectReason.REJECT_REASON_UNAVAILABLE || r === RejectReason.REJECT_REASON_OVERLOADED
  const submitters = options.submitters ?? 3
  const loudInFlight = options.inFlight ?? 100
  let inFlight = loudInFlight
  const pumps: Array<() => void> = []
  const submitterDone: Array<Promise<void>> = []
  for (let s = 0; s < submitters; s++) {
    const next = workloadStream(options.seed * 16 + s * 2 + 1, `n${s}`)
    submitterDone.push(
      new Promise<void>((resolve) => {
        let mine = 0
        const pump = () => {
          while (generating && mine < inFlight) {
            const tx = next()
            const id = txIdOf(tx)
            byId.set(id, tx)
            mine++
            outstanding++
            submit(tx, id, () => {
              mine--
              outstanding--
              if (!generating && mine === 0) resolve()
              else setImmediate(pump)
            })
          }
          if (!generating && mine === 0) resolve()
        }
        pumps.push(pump)
        pump()
      })
    )
  }

  // Elastic: loud and quiet stretches (their own draws: a seed's faults stay what they are without it).
  let phases: ReturnType<typeof setTimeout> | undefined
  if (options.elastic === true) {
    const loudness = prng(options.seed * 7_919 + 1)
    const flip = (loud: boolean) => {
      inFlight = loud ? loudInFlight : QUIET_IN_FLIGHT
      if (loud) for (const pump of pumps) pump()
      phases = setTimeout(() => flip(!loud), Math.round(5_000 + loudness() * 5_000))
    }
    flip(true)
  }

  // ---- faults ----
  const kinds = options.faultKinds ?? FAULTS
  const faults: Partial<Record<RemoraFault, number>> = Object.fromEntries(kinds.map((k) => [k, 0]))
  const resumeMs: Array<{ fault: RemoraFault; ms: number }> = []
  const order = [...kinds].sort(() => random() - 0.5)
  const resumed = async (fault: RemoraFault) => {
    const healed = performance.now()
    await until(() => lastReceiptAt > healed, 120_000, `a receipt after ${fault}`)
    const ms = lastReceiptAt - healed
    resumeMs.push({ fault, ms })
    say(`  receipts again ${ms.toFixed(0)} ms after the heal`)
  }
  const inject = async (kind: RemoraFault) => {
    faults[kind] = (faults[kind] ?? 0) + 1
    if (kind === "nats-restart") {
      const downMs = between(300, 1_500)
      // One server: no draw, so a seed's faults stay what they were before sites.
      const server =
        site.servers.length === 1 ? site.servers[0]! : site.servers[Math.floor(random() * site.servers.length)]!
      say(`${server.name}: kill -9, restart after ${downMs} ms`)
      await Effect.runPromise(server.kill)
      await sleep(downMs)
      await Effect.runPromise(server.restart)
      return resumed(kind)
    }
    if (kind === "worker-partition" || kind === "coordinator-partition") {
      const partition = site.partition
      if (partition === undefined) throw new Error(`this site cannot ${kind}`)
      const actor = kind === "coordinator-partition" ? "x1" : workerIds[Math.floor(random() * workerIds.length)]!
      const cutMs = between(2_000, 8_000)
      say(`${actor}'s host: cut off for ${cutMs} ms`)
      await Effect.runPromise(partition(actor, true))
      try {
        await sleep(cutMs)
      } finally {
        await Effect.runPromise(partition(actor, false))
      }
      await Effect.runPromise(site.healed ?? Effect.void)
      return resumed(kind)
    }
    if (kind === "coordinator-kill") {
      const downMs = between(200, 1_500)
      say(`coordinator x1: kill -9, restart after ${downMs} ms`)
      coordinator.child.kill("SIGKILL")
      await coordinator.exited
      await sleep(downMs)
      coordinator = await startCoordinator()
      return resumed(kind)
    }
    // A worker being started again after its retirement is skipped (drawn the same, so a seed's faults hold).
    const drawn = workerIds[Math.floor(random() * workerIds.length)]!
    const id = alive(drawn) ? drawn : (workerIds.find(alive) ?? drawn)
    if (kind === "worker-pause") {
      const pausedMs = between(1_000, 7_000)
      say(`${id}: SIGSTOP for ${pausedMs} ms`)
      const child = workers.get(id)!.child
      child.kill("SIGSTOP")
      try {
        await sleep(pausedMs)
      } finally {
        child.kill("SIGCONT")
      }
      return resumed(kind)
    }
    const downMs = between(200, 2_000)
    say(`${id}: kill -9, restart after ${downMs} ms`)
    const w = workers.get(id)!
    w.child.kill("SIGKILL")
    await w.exited
    await sleep(downMs)
    const next = await startWorker(id)
    workers.set(id, next)
    if (options.elastic === true) superviseRetirement(id, next)
    return resumed(kind)
  }
  await until(() => receipts.size > 200, 120_000, "the first 200 receipts")
  const faultsBegan = performance.now()
  const logged = (pattern: RegExp) => coordinatorLines.filter((l) => pattern.test(l)).length
  // Elastic: faults go on until the pool has grown and shrunk at least once (for at most 2 more minutes).
  const scaledBothWays = () =>
    options.elastic !== true ||
    (logged(SCALE_OUT) > 0 && logged(SCALE_IN) > 0) ||
    performance.now() - faultsBegan > options.faultsMs + 120_000
  for (let i = 0; i < kinds.length || performance.now() - faultsBegan < options.faultsMs || !scaledBothWays(); i++) {
    await inject(i < kinds.length ? order[i]! : kinds[Math.floor(random() * kinds.length)]!)
    await sleep(between(1_000, 3_000))
  }

  // ---- the end: every transaction answered, then the checks ----
  generating = false
  if (phases !== undefined) clearTimeout(phases)
  say(`faults over; waiting for ${outstanding} submissions`)
  await Promise.race([
    Promise.all(submitterDone),
    sleep(180_000).then(() => {
      throw new Error(`${outstanding} submissions unanswered 180 s after the faults`)
    })
  ])
  let state = await Effect.runPromise(
    client.state.pipe(
      Effect.filterOrFail((s) => s.complete),
      Effect.retry(Schedule.spaced("200 millis").pipe(Schedule.upTo("60 seconds")))
    )
  )
  const all = [...receipts.values()]
  const seqs = all.map((r) => r.seq).sort((a, b) => a - b)
  const gap = seqs.findIndex((seq, i) => seq !== i + 1)
  if (gap >= 0) problems.push(`seqs are not 1..${seqs.length}: position ${gap + 1} holds seq ${seqs[gap]}`)
  if (state.committed !== all.length) {
    problems.push(`${state.committed} committed for ${all.length} distinct ids (an id committed twice?)`)
  }
  // Every receipt's status is the reference's (a wrong signature verdict or abort shows here, by seq).
  const statusOf = {
    executed: TxStatus.TX_STATUS_EXECUTED,
    "invalid-signature": TxStatus.TX_STATUS_INVALID_SIGNATURE,
    aborted: TxStatus.TX_STATUS_ABORTED
  } as const
  const wrongStatus: Array<string> = []
  const reference = referenceState(receiptOrder(all), byId, { recordHistory: true }, (id, step) => {
    const r = receipts.get(id)!
    if (r.status !== statusOf[step.status] && wrongStatus.length < 10) {
      wrongStatus.push(
        `seq ${r.seq} (${id}, height ${r.height}, on ${r.worker}): ${TxStatus[r.status]}, reference ${step.status}`
      )
    }
  })
  problems.push(...wrongStatus)
  const referenceHex = reference.digest().hex()
  // GetExecutionState sums the workers' digests, asked one by one. Before it checked that nothing ran while it
  // asked, a "complete" answer once missed objects the durable snapshot held at the reference's versions (across
  // hosts, right after a stall replay). A divergence never settles, a racing read does: read again before
  // calling it one, and say so.
  let reads = 1
  for (const settleBy = Date.now() + 30_000; state.stateHash !== referenceHex && Date.now() < settleBy; reads++) {
    await sleep(500)
    const again = await Effect.runPromise(Effect.either(client.state))
    if (again._tag === "Right" && again.right.complete) state = again.right
  }
  if (reads > 1) say(`state read ${reads} times before it matched the reference (or gave up)`)
  if (state.stateHash !== referenceHex) {
    const want = reference.digest().toProto()
    problems.push(
      `state hash ${state.stateHash} is not the reference's ${referenceHex} ` +
        `(objects ${state.digest?.objects} vs ${want.objects}, version sum ${state.digest?.versionSum} vs ${want.versionSum})`
    )
    problems.push(...(await objectDifferences(client, reference)))
    problems.push(...(await wrongProductions(auditDir, reference)))
  }
  // Every receipt given is answered identically (all of them in a short run, a sample in a long one).
  const sample = all.length <= 5_000 ? all : all.filter((_, i) => i % Math.ceil(all.length / 5_000) === 0)
  for (const r of sample) {
    const got = await Effect.runPromise(client.getReceipt(r.txId))
    if (got.receipt === undefined || !sameReceipt(got.receipt, r)) {
      problems.push(`GetReceipt ${r.txId} answers ${JSON.stringify(got.receipt)}, not the receipt given`)
      break
    }
  }
  const logs = join(dataDir, "logs")
  await mkdir(logs, { recursive: true })
  for (const { name, process } of started) await writeFile(join(logs, `${name}.log`), process.lines.join("\n"))
  say(`every process's log and the workers' audit logs: ${dataDir}`)
  const servingMs = coordinatorLines.flatMap((l) => {
    const m = /serving again (\d+) ms after start/.exec(l)
    return m === null ? [] : [Number(m[1])]
  })
  return {
    seed: options.seed,
    elapsedMs: performance.now() - began,
    transactions: all.length,
    resubmissions,
    faults,
    recoveries: coordinatorLines.filter((l) => /recovery after/.test(l)).length,
    coordinatorRestarts: coordinatorLines.filter((l) => /coordinator restarted \(/.test(l)).length,
    scaleOuts: logged(SCALE_OUT),
    scaleIns: logged(SCALE_IN),
    resumeMs,
    coordinatorRestartToServingMs: servingMs,
    longestStallMs,
    problems,
    events
  }
}

/** Where a diverged state differs from the reference, object by object (the first few). */
const objectDifferences = async (client: RemoraClient, reference: ReferenceExecutor): Promise<Array<string>> => {
  const found: Array<string> = []
  for (const [key, want] of reference.entries()) {
    const got = await Effect.runPromise(Effect.either(client.getObject(key)))
    if (got._tag === "Left") found.push(`${key}: GetObject failed: ${got.left.message}`)
    else if (got.right.version !== want.version || !Buffer.from(got.right.value).equals(Buffer.from(want.value))) {
      const show = (v: Uint8Array) => Buffer.from(v).toString("hex").slice(0, 32)
      found.push(
        `${key} on ${got.right.owner}: v${got.right.version} ${show(got.right.value)}, ` +
          `reference v${want.version} ${show(want.value)} (assigned v${got.right.assignedVersion})`
      )
    }
    if (found.length >= 20) break
  }
  return found
}

/**
 * The versions workers produced with a value other than the reference's (from their audit logs), earliest seq
 * first: where a diverged run went wrong, by which incarnation and in which fence generation.
 */
const wrongProductions = async (dir: string, reference: ReferenceExecutor): Promise<Array<string>> => {
  const wrong: Array<{ seq: number; line: string }> = []
  let checked = 0
  for (const file of await readdir(dir)) {
    for (const line of (await readFile(join(dir, file), "utf8")).split("\n")) {
      const f = line.split(" ")
      // P|C seq key version hash generation incarnation; A from key version hash sent-in generation incarnation
      const arrival = f[0] === "A"
      if (f.length < 7) continue
      const [key, version, hash] = [f[2]!, f[3]!, f[4]!]
      const want = reference.valueAt(key, Number(version))
      checked++
      if (want === undefined || auditHash(want) !== hash) {
        const seq = arrival ? Number.POSITIVE_INFINITY : Number(f[1])
        wrong.push({
          seq,
          line: `${file}: ${line} (reference ${want === undefined ? "none" : auditHash(want)})`
        })
      }
    }
  }
  wrong.sort((a, b) => a.seq - b.seq)
  const arrivals = wrong.filter((w) => w.seq === Number.POSITIVE_INFINITY)
  return [
    `audit (P produced, C consumed: seq key version hash generation incarnation; A arrived: from key version ` +
      `hash sent-generation generation incarnation): ${checked} entries checked, ${wrong.length} differ`,
    ...wrong.slice(0, 12).map((w) => w.line),
    ...arrivals.slice(0, 8).map((w) => w.line)
  ]
}

/** One nats-server on loopback, every process in the test's own namespace. */
const localSite = async (harness: Harness): Promise<RemoraSite> => {
  const nats = await startNats(harness)
  return {
    placement: () => ({ natsUrl: nats.url, address: "127.0.0.1" }),
    servers: [{ name: "nats-server", kill: nats.kill, restart: nats.restart }]
  }
}

const prefixOf = (site: RemoraSite, actor: string) => {
  const prefix = site.placement(actor).prefix
  return prefix === undefined ? {} : { prefix }
}

export const summarizeRemora = (r: RemoraNemesisReport): string => {
  const max = (xs: ReadonlyArray<number>) => (xs.length === 0 ? 0 : Math.max(...xs))
  const byFault = (Object.keys(r.faults) as Array<RemoraFault>).map((f) => {
    const ms = r.resumeMs.filter((x) => x.fault === f).map((x) => x.ms)
    return `${f} ${r.faults[f]} (max resume ${max(ms).toFixed(0)} ms)`
  })
  return [
    `seed ${r.seed}, ${(r.elapsedMs / 1000).toFixed(0)} s: ${r.transactions} transactions, ${r.resubmissions} resubmissions`,
    `faults: ${byFault.join(", ")}`,
    `scale-outs ${r.scaleOuts}, scale-ins ${r.scaleIns}; recoveries logged: ${r.recoveries}; coordinator restarts: ${r.coordinatorRestarts} (to serving: ${r.coordinatorRestartToServingMs.join(", ")} ms)`,
    `max time to resume: ${max(r.resumeMs.map((x) => x.ms)).toFixed(0)} ms; longest stall without a receipt: ${r.longestStallMs.toFixed(0)} ms`,
    r.problems.length === 0 ? "checks: all passed" : `PROBLEMS:\n${r.problems.slice(0, 40).join("\n")}`
  ].join("\n")
}
