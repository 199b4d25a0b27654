import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

/** Directory holding the .proto sources (for gRPC reflection, which needs descriptors at run time). */
export const protoRoot: string = join(dirname(fileURLToPath(import.meta.url)), "..")

/**
 * Every .proto of `protoRoot` (and the standard health service's) compiled into one FileDescriptorSet by
 * `pnpm gen`: what gRPC server reflection serves.
 */
export const descriptorSetPath: string = join(protoRoot, "src", "gen", "descriptors.binpb")
