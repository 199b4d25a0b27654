/**
 * `reef status` without Effect and grpc-js. A plain `reef status` is the command people run most, and most of
 * its time went to compiling the Effect and grpc-js modules it loaded (on Node 20 there is no compile cache
 * for ES modules). This path reads the cluster file, makes the gateway's one unary call (ListActors) over
 * node:http2 with gRPC's framing (a 5-byte prefix per message, the status in the trailers), decodes the
 * answer with the generated protobuf code and prints the same table or JSON as the full command.
 *
 * It takes only what it can answer exactly like the full command: the plain options, a plaintext cluster
 * (no TLS, no token), and a gateway that answers OK. Anything else (a flag it does not know, --watch, a secured
 * cluster, no cluster file, an error of any kind) returns false, and bin/reef.mjs runs the full command, which
 * words every failure in one place.
 */
import { connect } from "node:http2"
import { BinaryReader, BinaryWriter } from "@bufbuild/protobuf/wire"
import { colourEnabled, makeStyle } from "@reef/devkit/output"
import { Member } from "@reef/proto/presence"
import { readClusterFile } from "./cluster-file.js"
import { STATUS_ROLES } from "./roles/status-columns.js"
import { statusJson, statusSummary, statusText } from "./status-view.js"

interface FastInput {
  readonly json: boolean
  readonly role: string
  readonly clusterFile?: string
  readonly gateway?: string
  readonly timeoutMs: number
}

/** The options this path takes, as the full command parses them; undefined for anything else. */
export const parseFastStatus = (argv: ReadonlyArray<string>): FastInput | undefined => {
  if (argv[0] !== "status") return undefined
  let json = false
  let role = ""
  let clusterFile: string | undefined
  let gateway: string | undefined
  let timeoutMs = 10_000
  for (let i = 1; i < argv.length; i++) {
    const arg = argv[i]!
    const value = argv[i + 1]
    if (arg === "--json") json = true
    else if ((arg === "-o" || arg === "--output") && (value === "json" || value === "text")) {
      json = value === "json"
      i++
    } else if (arg === "--role" && value !== undefined && /^[A-Za-z0-9_$-]{1,64}$/.test(value)) {
      role = value
      i++
    } else if (arg === "--cluster-file" && value !== undefined && value !== "") {
      clusterFile = value
      i++
    } else if (arg === "--gateway" && value !== undefined && /^[\w.-]+:\d{1,5}$/.test(value)) {
      gateway = value
      i++
    } else if (arg === "--timeout" && value !== undefined && /^[1-9]\d{0,6}$/.test(value)) {
      timeoutMs = Number(value)
      i++
    } else return undefined
  }
  return {
    json,
    role,
    timeoutMs,
    ...(clusterFile === undefined ? {} : { clusterFile }),
    ...(gateway === undefined ? {} : { gateway })
  }
}

/** A gRPC message: compressed flag 0, big-endian length, the bytes. */
const frame = (message: Uint8Array): Buffer => {
  const out = Buffer.alloc(5 + message.length)
  out.writeUInt32BE(message.length, 1)
  out.set(message, 5)
  return out
}

/** One unary call over plaintext HTTP/2; the reply message, or undefined for any failure (the caller falls back). */
export const unaryCall = (address: string, path: string, request: Uint8Array, timeoutMs: number) =>
  new Promise<Uint8Array | undefined>((resolve) => {
    const session = connect(`http://${address}`)
    const done = (reply: Uint8Array | undefined) => {
      clearTimeout(timer)
      // Not close(): a graceful close waits for the server to end the connection, and the process with it.
      session.destroy()
      resolve(reply)
    }
    const timer = setTimeout(() => {
      session.destroy()
      resolve(undefined)
    }, timeoutMs)
    session.on("error", () => done(undefined))
    const stream = session.request({
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc+proto",
      te: "trailers",
      "grpc-timeout": `${timeoutMs}m`
    })
    const chunks: Array<Buffer> = []
    let httpOk = false
    let grpcOk = false
    stream.on("response", (headers) => {
      httpOk = headers[":status"] === 200
      if (headers["grpc-status"] !== undefined) grpcOk = headers["grpc-status"] === "0"
    })
    stream.on("trailers", (trailers) => {
      grpcOk = trailers["grpc-status"] === "0"
    })
    stream.on("data", (chunk: Buffer) => chunks.push(chunk))
    stream.on("error", () => done(undefined))
    stream.on("end", () => {
      const body = Buffer.concat(chunks)
      if (!httpOk || !grpcOk || body.length < 5 || body[0] !== 0) return done(undefined)
      const length = body.readUInt32BE(1)
      done(body.length === 5 + length ? body.subarray(5) : undefined)
    })
    stream.end(frame(request))
  })

/** reef.v1.ListActorsRequest { role = 1; include_left = 2 }. */
const listActorsRequest = (role: string): Uint8Array => {
  const writer = new BinaryWriter()
  if (role !== "") writer.uint32(10).string(role)
  writer.uint32(16).bool(true)
  return writer.finish()
}

/** reef.v1.ListActorsResponse { repeated Member members = 1 }. */
const decodeMembers = (bytes: Uint8Array): Array<Member> => {
  const reader = new BinaryReader(bytes)
  const members: Array<Member> = []
  while (reader.pos < reader.len) {
    const tag = reader.uint32()
    if (tag >>> 3 === 1 && (tag & 7) === 2) members.push(Member.decode(reader, reader.uint32()))
    else reader.skip(tag & 7)
  }
  return members
}

/** Runs `reef status` if it can answer exactly as the full command would; false otherwise. */
export const fastStatus = async (argv: ReadonlyArray<string>): Promise<boolean> => {
  const input = parseFastStatus(argv)
  if (input === undefined) return false
  if (Object.keys(process.env).some((k) => k.startsWith("REEF_GRPC_"))) return false
  const lookup = readClusterFile(input.clusterFile)
  if (input.gateway === undefined && lookup._tag !== "Found") return false
  const file = lookup._tag === "Found" ? lookup.file : undefined
  if (file?.security !== undefined && Object.keys(file.security).length > 0) return false
  const gateway = input.gateway ?? file!.gateway
  const reply = await unaryCall(gateway, "/reef.v1.Cluster/ListActors", listActorsRequest(input.role), input.timeoutMs)
  if (reply === undefined) return false
  let members: Array<Member>
  try {
    members = decodeMembers(reply)
  } catch {
    return false
  }
  // An unknown --role is a usage error of the full command (it lists the roles present).
  if (input.role !== "" && members.length === 0) return false
  const nowMs = Date.now()
  if (input.json) {
    process.stdout.write(
      `${JSON.stringify({ gateway, nowMs, ...statusJson({ members, nowMs, roles: STATUS_ROLES }) }, null, 2)}\n`
    )
    return true
  }
  const style = makeStyle(colourEnabled(process.stdout.isTTY))
  process.stdout.write(
    `${style.dim(statusSummary(members, gateway))}\n${statusText({ members, nowMs, roles: STATUS_ROLES }, style)}\n`
  )
  return true
}
