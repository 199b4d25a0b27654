/**
 * etcd's cold start (§5.3.3: "etcd and SLSMR ... must provision VMs and restore state before serving
 * requests"): from a snapshot file, `etcdctl snapshot restore` rebuilds each of the three members' data
 * directories, the members start, and the clock stops at the first committed write.
 */
import { execFile, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { findBinary, killOnExit } from "@reef/devkit"
import { etcdMemberHealthy, findEtcdBinary } from "../peers/etcd.js"
import { freePorts, waitExit } from "../peers/proc.js"

const run = promisify(execFile)

export const findEtcdctl = (): string | undefined => findBinary("etcdctl", "ETCDCTL_BIN", ["/usr/bin/etcdctl"])

/** `etcdctl snapshot save` of a running member. */
export const saveEtcdSnapshot = async (endpoint: string, file: string): Promise<void> => {
  const etcdctl = findEtcdctl()
  if (etcdctl === undefined) throw new Error("etcdctl not found: REEF_BENCH_PEERS=1 bash scripts/bootstrap.sh")
  await run(etcdctl, ["--endpoints", endpoint, "snapshot", "save", file], {
    env: { ...process.env, ETCDCTL_API: "3" },
    maxBuffer: 16 * 1024 * 1024
  })
}

/** Restores three members from `snapshot`, starts them, and times until a write commits. */
export const etcdColdStartMs = async (snapshot: string, members = 3): Promise<number> => {
  const etcd = findEtcdBinary()
  const etcdctl = findEtcdctl()
  if (etcd === undefined || etcdctl === undefined) {
    throw new Error("etcd/etcdctl not found: REEF_BENCH_PEERS=1 bash scripts/bootstrap.sh")
  }
  const base = mkdtempSync(join(tmpdir(), "reef-etcd-restore-"))
  const ports = await freePorts(2 * members)
  const names = Array.from({ length: members }, (_, i) => `etcd-${i}`)
  const peer = (i: number) => `http://127.0.0.1:${ports[2 * i + 1]}`
  const client = (i: number) => `http://127.0.0.1:${ports[2 * i]}`
  const initialCluster = names.map((n, i) => `${n}=${peer(i)}`).join(",")
  const env = { ...process.env, ETCDCTL_API: "3" }
  const children: Array<ReturnType<typeof spawn>> = []
  const started = Date.now()
  try {
    await Promise.all(
      names.map((name, i) =>
        run(
          etcdctl,
          [
            "snapshot",
            "restore",
            snapshot,
            "--name",
            name,
            "--initial-cluster",
            initialCluster,
            "--initial-advertise-peer-urls",
            peer(i),
            "--data-dir",
            join(base, name)
          ],
          { env, maxBuffer: 16 * 1024 * 1024 }
        )
      )
    )
    for (const [i, name] of names.entries()) {
      children.push(
        killOnExit(
          spawn(
            etcd,
            [
              "--name",
              name,
              "--data-dir",
              join(base, name),
              "--listen-client-urls",
              client(i),
              "--advertise-client-urls",
              client(i),
              "--listen-peer-urls",
              peer(i),
              "--initial-advertise-peer-urls",
              peer(i),
              "--initial-cluster",
              initialCluster,
              "--log-level",
              "error",
              "--unsafe-no-fsync",
              "--quota-backend-bytes",
              String(8 * 1024 ** 3)
            ],
            { stdio: "ignore" }
          )
        )
      )
    }
    for (;;) {
      if (await etcdMemberHealthy(client(0), 500)) {
        const put = await run(etcdctl, ["--endpoints", client(0), "put", "coldstart", "1"], { env }).then(
          () => true,
          () => false
        )
        if (put) return Date.now() - started
      }
      if (Date.now() - started > 600_000) throw new Error("etcd did not serve within 10 minutes of its restore")
      await new Promise((r) => setTimeout(r, 20))
    }
  } finally {
    for (const c of children) c.kill("SIGKILL")
    await Promise.all(children.map((c) => waitExit(c)))
    rmSync(base, { recursive: true, force: true })
  }
}
