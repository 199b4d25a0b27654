// redis-parser 3 ships no types: the part of its API the RESP server uses.
declare module "redis-parser" {
  interface ParserOptions {
    readonly returnReply: (reply: unknown) => void
    readonly returnError: (error: Error) => void
    readonly returnFatalError?: (error: Error) => void
    readonly returnBuffers?: boolean
    readonly stringNumbers?: boolean
  }
  class Parser {
    constructor(options: ParserOptions)
    execute(buffer: Buffer): void
    reset(): void
  }
  export = Parser
}
