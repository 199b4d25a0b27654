/**
 * @reef/kernel/fuzz: property-based fuzzing of decoders for every package's tests (fuzz.ts), with the hostile
 * inputs it draws (inputs.ts). fast-check is re-exported so a package's fuzz tests need no dependency of their own.
 */
export { default as fc } from "fast-check"
export {
  approximateSize,
  DEFAULT_FUZZ_RUNS,
  type FuzzReport,
  type FuzzTarget,
  fuzzDecoder,
  fuzzDecoders,
  fuzzRuns
} from "./fuzz.js"
export { hostileBytes, mutatedBytes, protobufShaped, randomBytes, varint } from "./inputs.js"
