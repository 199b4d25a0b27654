/**
 * What server reflection describes: the FileDescriptorProtos the compiler made (`pnpm gen` compiles every .proto
 * with buf into one FileDescriptorSet), not descriptors rebuilt from a protobufjs tree. Rebuilt ones merged every
 * file of a package into one `reef_v1.proto` whose contents differed per server, and wrote `reserved 4;` as the
 * range (4, 4) where descriptor.proto's end is exclusive, so grpcio and grpcurl refused to build them.
 *
 * A server describes the files that define its services, their imports (transitively) and the health service's
 * file; reflection's `list` names only the services it serves.
 */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import type * as Protobuf from "@bufbuild/protobuf"
import type * as Wkt from "@bufbuild/protobuf/wkt"

const require = createRequire(import.meta.url)

/** The standard health service's file, which every server serves. */
export const HEALTH_PROTO_FILE = "grpc/health/v1/health.proto"

export interface ReflectedFiles {
  /** Each file's FileDescriptorProto as the compiler encoded it, imports before the files importing them. */
  readonly fileDescriptorProtos: ReadonlyArray<Uint8Array>
  /** Fully qualified names of the services these files define. */
  readonly services: ReadonlyArray<string>
}

/** A file reflection was asked to describe is not in the descriptor set. */
export class MissingProtoFileError extends Error {
  constructor(
    readonly file: string,
    readonly descriptorSet: string
  ) {
    super(`${file} is not in ${descriptorSet} (run pnpm gen after adding a .proto)`)
  }
}

/**
 * The files `protoFiles` need from the FileDescriptorSet at `descriptorSet`, with the health service's file.
 * Throws `MissingProtoFileError` when one is not there.
 */
export const reflectedFiles = (descriptorSet: string, protoFiles: ReadonlyArray<string>): ReflectedFiles => {
  const { fromBinary, toBinary } = require("@bufbuild/protobuf") as typeof Protobuf
  const { FileDescriptorSetSchema, FileDescriptorProtoSchema } = require("@bufbuild/protobuf/wkt") as typeof Wkt
  const set = fromBinary(FileDescriptorSetSchema, readFileSync(descriptorSet))
  const byName = new Map(set.file.map((file) => [file.name, file]))
  const ordered: Array<Wkt.FileDescriptorProto> = []
  const seen = new Set<string>()
  const visit = (name: string) => {
    if (seen.has(name)) return
    seen.add(name)
    const file = byName.get(name)
    if (file === undefined) throw new MissingProtoFileError(name, descriptorSet)
    for (const dependency of file.dependency) visit(dependency)
    ordered.push(file)
  }
  for (const name of [...protoFiles, HEALTH_PROTO_FILE]) visit(name)
  const services = [...protoFiles, HEALTH_PROTO_FILE].flatMap((name) => {
    const file = byName.get(name)!
    return file.service.map((service) => (file.package === "" ? service.name : `${file.package}.${service.name}`))
  })
  return { fileDescriptorProtos: ordered.map((file) => toBinary(FileDescriptorProtoSchema, file)), services }
}
