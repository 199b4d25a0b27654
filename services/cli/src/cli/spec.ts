/**
 * What a `reef` command accepts, as plain data: its options (each described, with its default), its
 * positional arguments, and cross-field checks. One parser (parse.ts) and one help renderer (help.ts) read
 * these specs for every command, so every command validates and documents its input the same way.
 *
 * Value parsers return an error sentence instead of throwing: the parser turns it into the one-line usage
 * error (`reef: invalid --kv-port "x": expected an integer from 0 to 65535`).
 */

/** A parsed value or why the text is not one (a sentence fragment: `expected an integer from 1 to 9`). */
export type Parsed<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly error: string }

export const ok = <A>(value: A): Parsed<A> => ({ ok: true, value })
export const bad = (error: string): Parsed<never> => ({ ok: false, error })

export interface OptionSpec<A> {
  readonly _tag: "Option"
  /** Takes no value (`--quick`); its value is true when given, false otherwise. */
  readonly flag: boolean
  readonly description: string
  /** Shown in help and usage after the option name (`--kv-port N`). */
  readonly placeholder: string
  /** One-letter alias (`-o`). */
  readonly short?: string | undefined
  /** Value when the option is absent. */
  readonly defaultValue?: A | undefined
  /** How help shows the default when it is computed at run time (`replica-<pid>`, `from .reef/cluster.json`). */
  readonly defaultText?: string | undefined
  readonly parse: (raw: string) => Parsed<A>
}

export interface ArgSpec<A> {
  readonly _tag: "Arg"
  readonly description: string
  readonly optional: boolean
  readonly parse: (raw: string) => Parsed<A>
}

export type Options = Readonly<Record<string, OptionSpec<any>>>
export type Args = Readonly<Record<string, ArgSpec<any>>>

type ValueOf<S> = S extends OptionSpec<infer A> ? A : S extends ArgSpec<infer A> ? A : never

/** The parsed input of a command: every option (by its flag name) and every argument (by its name). */
export type Input<O extends Options, A extends Args> = { readonly [K in keyof O]: ValueOf<O[K]> } & {
  readonly [K in keyof A]: ValueOf<A[K]>
}

interface OptionMeta<A> {
  readonly description: string
  readonly placeholder?: string
  readonly short?: string
  readonly default?: A
  readonly defaultText?: string
}

const option = <A>(meta: OptionMeta<A>, placeholder: string, parse: (raw: string) => Parsed<A>): OptionSpec<any> => ({
  _tag: "Option",
  flag: false,
  description: meta.description,
  placeholder: meta.placeholder ?? placeholder,
  short: meta.short,
  defaultValue: meta.default,
  defaultText: meta.defaultText,
  parse
})

type WithDefault<A> = OptionMeta<A> & { readonly default: A }
type WithoutDefault<A> = OptionMeta<A> & { readonly default?: undefined }

export const integerIn =
  (min: number, max: number, what = "an integer") =>
  (raw: string): Parsed<number> => {
    const n = /^-?\d+$/.test(raw.trim()) ? Number(raw) : Number.NaN
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      return bad(
        max === Number.MAX_SAFE_INTEGER ? `expected ${what} >= ${min}` : `expected ${what} from ${min} to ${max}`
      )
    }
    return ok(n)
  }

const numberFrom = (min: number) => (raw: string) => {
  const n = raw.trim() === "" ? Number.NaN : Number(raw)
  return Number.isFinite(n) && n >= min ? ok(n) : bad(`expected a number >= ${min}`)
}

/** Subject tokens: what NATS subjects, actor ids, roles and cluster names may contain (kernel subjects.ts). */
const TOKEN = /^[A-Za-z0-9_$-]{1,64}$/

const tokenParse = (what: string) => (raw: string) =>
  TOKEN.test(raw) ? ok(raw) : bad(`expected ${what}: 1-64 letters, digits, "_", "-" or "$"`)

/** `host:port` of a gRPC server (a bare port means 127.0.0.1). */
export const parseAddress = (raw: string): Parsed<string> => {
  if (/^\d+$/.test(raw))
    return integerIn(1, 65535, "a port")(raw).ok ? ok(`127.0.0.1:${raw}`) : bad("expected host:port")
  const match = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(\d+)$/.exec(raw)
  if (match === null || !integerIn(1, 65535)(match[2]!).ok) return bad("expected host:port, e.g. 127.0.0.1:50051")
  return ok(raw)
}

/** A NATS server URL (`nats://host:port`, also `tls://`, `ws://`, `wss://`), or a bare `host:port`. */
export const parseNatsUrl = (raw: string): Parsed<string> => {
  const url = /^[a-z]+:\/\//.test(raw) ? raw : `nats://${raw}`
  if (!URL.canParse(url)) return bad("expected a NATS URL, e.g. nats://127.0.0.1:4222")
  const parsed = new URL(url)
  if (!["nats:", "tls:", "ws:", "wss:"].includes(parsed.protocol)) {
    return bad(`expected a nats://, tls://, ws:// or wss:// URL, got ${parsed.protocol}//`)
  }
  if (parsed.hostname === "") return bad("expected a NATS URL with a host, e.g. nats://127.0.0.1:4222")
  return ok(url)
}

/** Constructors of options: each parses and checks its value, so a wrong one never reaches a command. */
export const Opt = {
  text: ((meta: OptionMeta<string>) => option(meta, "TEXT", ok)) as {
    (meta: WithDefault<string>): OptionSpec<string>
    (meta: WithoutDefault<string>): OptionSpec<string | undefined>
  },
  /** A subject token: actor ids, role, group and cluster names. */
  token: ((meta: OptionMeta<string>) => option(meta, "NAME", tokenParse("a name"))) as {
    (meta: WithDefault<string>): OptionSpec<string>
    (meta: WithoutDefault<string>): OptionSpec<string | undefined>
  },
  integer: ((meta: OptionMeta<number> & { readonly min?: number; readonly max?: number }) =>
    option(meta, "N", integerIn(meta.min ?? 0, meta.max ?? Number.MAX_SAFE_INTEGER))) as {
    (meta: WithDefault<number> & { readonly min?: number; readonly max?: number }): OptionSpec<number>
    (meta: WithoutDefault<number> & { readonly min?: number; readonly max?: number }): OptionSpec<number | undefined>
  },
  /** A non-negative number (milliseconds, bytes). */
  number: ((meta: OptionMeta<number> & { readonly min?: number }) => option(meta, "N", numberFrom(meta.min ?? 0))) as {
    (meta: WithDefault<number> & { readonly min?: number }): OptionSpec<number>
    (meta: WithoutDefault<number> & { readonly min?: number }): OptionSpec<number | undefined>
  },
  /** A TCP port; 0 asks the system for a free one. */
  port: ((meta: OptionMeta<number>) => option(meta, "PORT", integerIn(0, 65535, "a port"))) as {
    (meta: WithDefault<number>): OptionSpec<number>
    (meta: WithoutDefault<number>): OptionSpec<number | undefined>
  },
  choice: (<const C extends string>(meta: OptionMeta<C> & { readonly choices: ReadonlyArray<C> }) =>
    option(meta, meta.choices.join("|"), (raw) =>
      meta.choices.includes(raw as C) ? ok(raw as C) : bad(`expected one of ${meta.choices.join(", ")}`)
    )) as {
    <const C extends string>(meta: WithDefault<C> & { readonly choices: ReadonlyArray<C> }): OptionSpec<C>
    <const C extends string>(
      meta: WithoutDefault<C> & { readonly choices: ReadonlyArray<C> }
    ): OptionSpec<C | undefined>
  },
  /** A comma-separated list of subject tokens (`r1,r2,r3`), without duplicates. */
  tokens: ((meta: OptionMeta<ReadonlyArray<string>>) =>
    option(meta, "A,B,...", (raw) => {
      const items = raw.split(",").map((s) => s.trim())
      const wrong = items.find((s) => !TOKEN.test(s))
      if (wrong !== undefined) return bad(`"${wrong}" is not a name: use 1-64 letters, digits, "_", "-" or "$"`)
      const duplicate = items.find((s, i) => items.indexOf(s) !== i)
      if (duplicate !== undefined) return bad(`"${duplicate}" appears twice`)
      return ok(items)
    })) as {
    (meta: WithDefault<ReadonlyArray<string>>): OptionSpec<ReadonlyArray<string>>
    (meta: WithoutDefault<ReadonlyArray<string>>): OptionSpec<ReadonlyArray<string> | undefined>
  },
  address: ((meta: OptionMeta<string>) => option(meta, "HOST:PORT", parseAddress)) as {
    (meta: WithDefault<string>): OptionSpec<string>
    (meta: WithoutDefault<string>): OptionSpec<string | undefined>
  },
  natsUrl: ((meta: OptionMeta<string>) => option(meta, "URL", parseNatsUrl)) as {
    (meta: WithDefault<string>): OptionSpec<string>
    (meta: WithoutDefault<string>): OptionSpec<string | undefined>
  },
  /** Any other value, checked by `parse`. */
  of: (<A>(meta: OptionMeta<A> & { readonly placeholder: string; readonly parse: (raw: string) => Parsed<A> }) =>
    option(meta, meta.placeholder, meta.parse)) as {
    <A>(
      meta: WithDefault<A> & { readonly placeholder: string; readonly parse: (raw: string) => Parsed<A> }
    ): OptionSpec<A>
    <A>(
      meta: WithoutDefault<A> & { readonly placeholder: string; readonly parse: (raw: string) => Parsed<A> }
    ): OptionSpec<A | undefined>
  },
  /** A boolean switch: true when given. */
  flag: (meta: { readonly description: string; readonly short?: string }): OptionSpec<boolean> => ({
    _tag: "Option",
    flag: true,
    description: meta.description,
    placeholder: "",
    short: meta.short,
    defaultValue: false,
    parse: (raw) =>
      raw === "true" || raw === "" ? ok(true) : raw === "false" ? ok(false) : bad("expected true or false")
  })
}

interface ArgMeta {
  readonly description: string
}

export const Arg = {
  text: (meta: ArgMeta): ArgSpec<string> => ({
    _tag: "Arg",
    description: meta.description,
    optional: false,
    parse: ok
  }),
  /** A key or an id: text that must not be empty (an empty key is a command-line mistake, exit code 2). */
  key: (meta: ArgMeta): ArgSpec<string> => ({
    _tag: "Arg",
    description: meta.description,
    optional: false,
    parse: (raw) => (raw === "" ? bad("must not be empty") : ok(raw))
  }),
  optionalText: (meta: ArgMeta): ArgSpec<string | undefined> => ({
    _tag: "Arg",
    description: meta.description,
    optional: true,
    parse: ok
  }),
  /** A value checked by `parse` (a role, an actor address, a suite name). */
  of: <A>(meta: ArgMeta & { readonly parse: (raw: string) => Parsed<A> }): ArgSpec<A> => ({
    _tag: "Arg",
    description: meta.description,
    optional: false,
    parse: meta.parse
  })
}

/** What help shows of a command. */
export interface CommandDoc {
  readonly name: string
  /** One line: shown in the parent's command list. */
  readonly summary: string
  /** Paragraphs of help after the usage line. */
  readonly description?: string
  readonly examples?: ReadonlyArray<string>
}

/** A command's input: its options and arguments, and the checks across them. */
export interface CommandInput<O extends Options, A extends Args> {
  readonly options: O
  readonly args: A
  /** Checks across values (`--members` must include `--id`); a sentence when the input is wrong. */
  readonly validate?: (input: Input<O, A>) => string | undefined
}

/**
 * A command that runs. `R` is what running it produces (the CLI's entry point decides what that is: an Effect
 * to run); the spec stays free of it, so help and parsing load nothing a command needs to run.
 */
export interface LeafSpec<O extends Options = Options, A extends Args = Args, R = unknown>
  extends CommandDoc,
    CommandInput<O, A> {
  readonly _tag: "Leaf"
  readonly run: (input: Input<O, A>) => R
}

/** A command with subcommands (`reef kv get|put|...`, `reef run <role>`). */
export interface GroupSpec<R = unknown> extends CommandDoc {
  readonly _tag: "Group"
  /** Placeholder of the subcommand in usage (`<command>`, `<role>`). */
  readonly placeholder: string
  /** Heading of the subcommand list in help (`Commands`, `Roles`). */
  readonly listHeading: string
  readonly commands: ReadonlyArray<CommandSpec<R>>
}

export type CommandSpec<R = unknown> = LeafSpec<any, any, R> | GroupSpec<R>

/** A leaf's spec as written: arguments may be left out. */
export type LeafDefinition<O extends Options, A extends Args, R> = CommandDoc &
  Omit<CommandInput<O, A>, "args"> & {
    readonly args?: A
    readonly run: (input: Input<O, A>) => R
  }

export const leaf = <const O extends Options, const A extends Args, R>(
  spec: LeafDefinition<O, A, R>
): LeafSpec<O, A, R> => ({ _tag: "Leaf", args: {} as A, ...spec })

export const group = <R>(spec: Omit<GroupSpec<R>, "_tag">): GroupSpec<R> => ({ _tag: "Group", ...spec })

/** Every command path of a tree, the root first: `[reef]`, `[reef, run]`, `[reef, run, replica]`, ... */
export const commandPaths = <R>(
  command: CommandSpec<R>,
  prefix: ReadonlyArray<CommandSpec<R>> = []
): Array<ReadonlyArray<CommandSpec<R>>> => {
  const path = [...prefix, command]
  return command._tag === "Group" ? [path, ...command.commands.flatMap((sub) => commandPaths(sub, path))] : [path]
}
