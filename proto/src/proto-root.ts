import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

/** Directory holding the .proto sources (for gRPC reflection, which needs descriptors at run time). */
export const protoRoot: string = join(dirname(fileURLToPath(import.meta.url)), "..")
