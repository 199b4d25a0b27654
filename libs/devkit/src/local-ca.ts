/**
 * A local certificate authority for a cluster on this machine (`reef up --tls`, the tests): a CA and one
 * certificate for the cluster's processes, valid for `localhost` and 127.0.0.1 as a server and as a client
 * (NATS and gRPC, mutual TLS included). Made by `openssl` from Debian (scripts/bootstrap.sh installs it);
 * ECDSA P-256 keys, written 0600.
 */
import { execFileSync } from "node:child_process"
import { chmodSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Data from "effect/Data"

export class LocalCaError extends Data.TaggedError("LocalCaError")<{ readonly step: string; readonly reason: string }> {
  override get message() {
    return `making the cluster's certificates (${this.step}): ${this.reason}`
  }
}

export interface LocalCa {
  readonly dir: string
  /** The CA certificate every process verifies its peers with. */
  readonly caFile: string
  /** The processes' certificate and key (server and client). */
  readonly certFile: string
  readonly keyFile: string
}

const openssl = (step: string, args: ReadonlyArray<string>, cwd: string): void => {
  try {
    execFileSync("openssl", args, { cwd, stdio: ["ignore", "ignore", "pipe"] })
  } catch (cause) {
    const stderr = (cause as { stderr?: Buffer }).stderr?.toString().trim()
    const reason =
      (cause as NodeJS.ErrnoException).code === "ENOENT"
        ? "openssl not found (apt-get install -y openssl)"
        : stderr || String(cause)
    throw new LocalCaError({ step, reason })
  }
}

const EXTENSIONS = [
  "basicConstraints=CA:FALSE",
  "keyUsage=digitalSignature,keyEncipherment",
  "extendedKeyUsage=serverAuth,clientAuth",
  "subjectAltName=DNS:localhost,IP:127.0.0.1"
].join("\n")

/** A new CA and a process certificate in `dir` (created 0700). Throws a LocalCaError naming the step. */
export const writeLocalCa = (dir: string, name = "reef"): LocalCa => {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  chmodSync(dir, 0o700)
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
  openssl(
    "CA",
    ["req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "3650", "-subj", `/CN=${name} local CA`],
    dir
  )
  openssl(
    "certificate request",
    ["req", ...ec, "-keyout", "node.key", "-out", "node.csr", "-subj", `/CN=${name} node`],
    dir
  )
  writeFileSync(join(dir, "node.ext"), `${EXTENSIONS}\n`)
  openssl(
    "certificate",
    [
      "x509",
      "-req",
      "-in",
      "node.csr",
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      "node.pem",
      "-days",
      "825",
      "-extfile",
      "node.ext"
    ],
    dir
  )
  for (const key of ["ca.key", "node.key"]) chmodSync(join(dir, key), 0o600)
  return { dir, caFile: join(dir, "ca.pem"), certFile: join(dir, "node.pem"), keyFile: join(dir, "node.key") }
}
