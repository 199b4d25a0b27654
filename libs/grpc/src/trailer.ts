/**
 * The trailer a failed call carries its Reef error code in: its own module (and the `@reef/grpc/trailer`
 * subpath) so a client reads it without loading the server side (grpc-js server, reflection, the kernel).
 */

/** Name of the trailer carrying the Reef error code (e.g. `ERROR_CODE_STOPPED`), finer than the gRPC status. */
export const REEF_ERROR_CODE_TRAILER = "reef-error-code"
