/**
 * Token transfer between two accounts: `from` pays `amount` to `to`. An overdraft aborts: no effect, but the
 * transaction still consumes and produces its versions like every other.
 */
import { TokenTransfer } from "@reef/proto"
import { aborted, type Contract, executed } from "./contract.js"
import { getNumber, record } from "./layout.js"

export const TOKEN_CONTRACT = "token.transfer"
export const TOKEN_PREFIX = "tok/"
/** Token accounts start with this balance. */
export const INITIAL_TOKEN_BALANCE = 1_000_000
/** Largest amount of one transfer (keeps balances exact in float64). */
export const MAX_TOKEN_AMOUNT = 1_000_000_000

export const tokenKey = (account: string | number): string => `${TOKEN_PREFIX}${account}`

/** An account: [balance, transfers made or received]. */
export const tokenAccount = (balance: number, transfers: number): Uint8Array => record([balance, transfers])

export const tokenGenesis = (): Uint8Array => tokenAccount(INITIAL_TOKEN_BALANCE, 0)

export const tokenBalance = (value: Uint8Array): number => getNumber(value, 0)

export const tokenTransfer: Contract<TokenTransfer> = {
  name: TOKEN_CONTRACT,
  namespace: TOKEN_PREFIX,
  decodeArgs: (bytes) => TokenTransfer.decode(bytes),
  checkArgs: (args) => {
    if (!args.from.startsWith(TOKEN_PREFIX) || !args.to.startsWith(TOKEN_PREFIX)) {
      return `accounts must start with "${TOKEN_PREFIX}"`
    }
    if (args.from === args.to) return "from and to must differ"
    if (!Number.isSafeInteger(args.amount) || args.amount <= 0 || args.amount > MAX_TOKEN_AMOUNT) {
      return `amount must be in 1..${MAX_TOKEN_AMOUNT}`
    }
    return undefined
  },
  accesses: (args) => ({ reads: [args.from, args.to], writes: [args.from, args.to] }),
  execute: (args, _declared, read) => {
    const from = read(args.from)
    const to = read(args.to)
    const balance = getNumber(from, 0)
    if (balance < args.amount) return aborted(`insufficient balance: ${balance} < ${args.amount}`)
    return executed(
      new Map([
        [args.from, tokenAccount(balance - args.amount, getNumber(from, 1) + 1)],
        [args.to, tokenAccount(getNumber(to, 0) + args.amount, getNumber(to, 1) + 1)]
      ])
    )
  }
}
