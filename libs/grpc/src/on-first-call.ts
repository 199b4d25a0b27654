/**
 * The health and reflection services every server has, loaded on their first call. Loading them parses
 * .proto files with protobufjs (grpc-health-check's own at import, reflection's own and the served ones): a
 * fifth of an actor process's start-up CPU, for services most processes never get a call on. Each is
 * registered by its methods' paths and stream kinds, which are known in advance (on-first-call.test.ts checks
 * them against the loaded services); the first call loads the real service, and every call goes to it.
 */
import { createRequire } from "node:module"
import type { Server, ServiceDefinition, UntypedServiceImplementation } from "@grpc/grpc-js"
import type * as ProtoLoader from "@grpc/proto-loader"
import type * as Reflection from "@grpc/reflection"
import type * as HealthCheck from "grpc-health-check"
import { reflectedFiles } from "./reflection.js"

// CommonJS packages, loaded synchronously when a call comes.
const require = createRequire(import.meta.url)

export interface LazyMethod {
  readonly name: string
  readonly path: string
  readonly requestStream: boolean
  readonly responseStream: boolean
}

const method = (service: string, name: string, requestStream: boolean, responseStream: boolean): LazyMethod => ({
  name,
  path: `/${service}/${name}`,
  requestStream,
  responseStream
})

export const HEALTH_METHODS: ReadonlyArray<LazyMethod> = [
  method("grpc.health.v1.Health", "Check", false, false),
  method("grpc.health.v1.Health", "Watch", false, true),
  method("grpc.health.v1.Health", "List", false, false)
]

export const REFLECTION_METHODS: ReadonlyArray<LazyMethod> = [
  method("grpc.reflection.v1.ServerReflection", "ServerReflectionInfo", true, true),
  method("grpc.reflection.v1alpha.ServerReflection", "ServerReflectionInfo", true, true)
]

type Handler = (call: unknown, callback?: unknown) => void
type Attributes = ServiceDefinition[string]

/** One method as a service's own `addToServer` registers it. */
export interface RegisteredMethod {
  readonly attributes: Attributes
  readonly handler: Handler
}

/** What `addToServer` registers, by method path: it is given a server that only records its services. */
export const registeredMethods = (addToServer: (server: Server) => void): ReadonlyMap<string, RegisteredMethod> => {
  const methods = new Map<string, RegisteredMethod>()
  const recorder = {
    addService: (definition: ServiceDefinition, implementation: UntypedServiceImplementation) => {
      for (const [name, attributes] of Object.entries(definition)) {
        const handler = (implementation[name] ?? implementation[attributes.originalName ?? ""]) as Handler | undefined
        if (handler !== undefined) methods.set(attributes.path, { attributes, handler: handler.bind(implementation) })
      }
    }
  }
  addToServer(recorder as unknown as Server)
  return methods
}

/**
 * Adds `methods` to `server`; the first call (of any of them) runs `addToServer` against a recorder, and each
 * call, its messages included, goes to what it registered. A failure to load fails that call (INTERNAL).
 */
export const addOnFirstCall = (
  server: Server,
  methods: ReadonlyArray<LazyMethod>,
  addToServer: (server: Server) => void
): void => {
  let loaded: ReadonlyMap<string, RegisteredMethod> | undefined
  const real = (path: string): RegisteredMethod => {
    loaded ??= registeredMethods(addToServer)
    const registered = loaded.get(path)
    if (registered === undefined) throw new Error(`${path} is not served`)
    return registered
  }
  const definition: Record<string, Attributes> = {}
  const implementation: Record<string, Handler> = {}
  for (const m of methods) {
    const key = m.path
    definition[key] = {
      path: m.path,
      originalName: m.name,
      requestStream: m.requestStream,
      responseStream: m.responseStream,
      requestSerialize: (value: unknown) => real(m.path).attributes.requestSerialize(value),
      requestDeserialize: (bytes: Buffer) => real(m.path).attributes.requestDeserialize(bytes),
      responseSerialize: (value: unknown) => real(m.path).attributes.responseSerialize(value),
      responseDeserialize: (bytes: Buffer) => real(m.path).attributes.responseDeserialize(bytes)
    }
    implementation[key] = (call, callback) => real(m.path).handler(call, callback)
  }
  server.addService(definition, implementation)
}

/** Health statuses; grpc-health-check's implementation serves them from the first health call on. */
export class LazyHealth {
  private readonly statuses = new Map<string, HealthCheck.ServingStatus>()
  private implementation: HealthCheck.HealthImplementation | undefined

  setStatus(service: string, status: HealthCheck.ServingStatus): void {
    this.statuses.set(service, status)
    this.implementation?.setStatus(service, status)
  }

  addToServer(server: Server): void {
    addOnFirstCall(server, HEALTH_METHODS, (recorder) => {
      const { HealthImplementation } = require("grpc-health-check") as typeof HealthCheck
      this.implementation ??= new HealthImplementation(Object.fromEntries(this.statuses))
      this.implementation.addToServer(recorder)
    })
  }
}

/** The compiled descriptors reflection describes and the files among them that define the served services. */
export interface ReflectionFiles {
  /** A FileDescriptorSet, e.g. `descriptorSetPath` from @reef/proto. */
  readonly descriptorSet: string
  readonly protoFiles: ReadonlyArray<string>
}

/**
 * Server reflection over `files` and the health service, from the compiled descriptors (reflection.ts) on its
 * first call. @grpc/reflection answers the requests; it indexes whatever FileDescriptorProtos its "package
 * definition" carries, so it is given the compiled ones instead of proto-loader's.
 */
export const addReflection = (server: Server, files: ReflectionFiles): void =>
  addOnFirstCall(server, REFLECTION_METHODS, (recorder) => {
    const { ReflectionService } = require("@grpc/reflection") as typeof Reflection
    const reflected = reflectedFiles(files.descriptorSet, files.protoFiles)
    const definition = { "reef.reflection": { fileDescriptorProtos: [...reflected.fileDescriptorProtos] } }
    new ReflectionService(definition as unknown as ProtoLoader.PackageDefinition, {
      services: [...reflected.services]
    }).addToServer(recorder)
  })
