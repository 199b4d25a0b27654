/**
 * The seeded workload: block n's transactions are a pure function of (chain, workload spec, n), so a primary
 * regenerates any block after a restart and tests replay any range. Transactions name entry points and
 * arguments only (which storage they touch is decided when they run).
 *
 * The knobs are calibrated so the executed blocks match the paper's Ethereum figures (§3, Appendix G);
 * `calibration.ts` measures them and prints them next to the paper's.
 */
import { PRICE_STEP } from "../runtime/contracts/mint-list.js"
import { Prng } from "../runtime/mix.js"
import { type Tx, TxKind } from "../runtime/transactions.js"
import { type ChainContracts, tokenHub } from "./chain-spec.js"

export interface WorkloadSpec {
  readonly seed: number
  /** Transactions per block: log-normal with this median and log-space sigma (a right-skewed block size). */
  readonly txsMedian: number
  readonly txsSigma: number
  /** Relative weights of transaction kinds. */
  readonly mix: Readonly<Record<"transfer" | "swap" | "approve" | "mint" | "borrow" | "repay" | "supply", number>>
  /** Keeper price updates per block. */
  readonly priceUpdates: number
  /** Zipf exponent of the account that sends (active accounts send often). */
  readonly senderZipf: number
  /** Share of transfers to an account drawn uniformly (mostly one never seen before). */
  readonly freshRecipientShare: number
  /** Token popularity: weight of each hub, of all mid tokens together, of all small tokens together. */
  readonly hubWeights: ReadonlyArray<number>
  readonly midWeight: number
  readonly smallWeight: number
  /** Share of swaps against the input token's hub (a direct pool); the rest route through hubs. */
  readonly directSwapShare: number
  /** A mint's walk down its list continues a step with this probability (a geometric walk length). */
  readonly mintWalkContinue: number
}

export const defaultWorkload = (seed = 7): WorkloadSpec => ({
  seed,
  txsMedian: 230,
  txsSigma: 0.47,
  mix: { transfer: 0.32, swap: 0.18, approve: 0.02, mint: 0.21, borrow: 0.14, repay: 0.05, supply: 0.08 },
  priceUpdates: 2,
  senderZipf: 0.8,
  freshRecipientShare: 0.45,
  hubWeights: [0.45, 0.33, 0.06],
  midWeight: 0.12,
  smallWeight: 0.04,
  directSwapShare: 0.4,
  mintWalkContinue: 0.87
})

const MAX_TXS = 4000

/** The transactions of block `number`. */
export const generateBlock = (chain: ChainContracts, workload: WorkloadSpec, number: number): Array<Tx> => {
  const rng = new Prng(workload.seed, number, 0xb10c)
  const count = Math.max(
    1,
    Math.min(MAX_TXS, Math.round(workload.txsMedian * Math.exp(workload.txsSigma * rng.normal())))
  )
  const kinds = Object.entries(workload.mix) as Array<[keyof WorkloadSpec["mix"], number]>
  const total = kinds.reduce((s, [, w]) => s + w, 0)
  const users = chain.spec.users
  const mids = chain.spec.midTokens
  const smalls = chain.spec.smallTokens
  const hubCount = chain.hubs.length
  const tokenWeightTotal = workload.hubWeights.reduce((s, w) => s + w, 0) + workload.midWeight + workload.smallWeight

  /** A token's position in chain.tokens, by popularity. */
  const tokenPosition = (): number => {
    let r = rng.next() * tokenWeightTotal
    for (let h = 0; h < hubCount; h++) {
      r -= workload.hubWeights[h] ?? 0
      if (r < 0) return h
    }
    r -= workload.midWeight
    if (r < 0) return hubCount + rng.zipf(mids, 1)
    return hubCount + mids + rng.int(smalls)
  }
  const sender = (population: number) => rng.zipf(Math.max(1, population), workload.senderZipf)
  const recipient = () => (rng.chance(workload.freshRecipientShare) ? rng.int(users) : sender(users))

  const txs: Array<Tx> = []
  for (let i = 0; i < workload.priceUpdates; i++) {
    const token = chain.tokens[rng.zipf(chain.tokens.length, 1)]!
    txs.push({ kind: TxKind.PriceUpdate, sender: 0, target: chain.oracle, a: token, b: 0, amount: 1e6 + rng.int(1e9) })
  }
  while (txs.length < count) {
    let r = rng.next() * total
    let kind: keyof WorkloadSpec["mix"] = "transfer"
    for (const [k, w] of kinds) {
      r -= w
      if (r < 0) {
        kind = k
        break
      }
    }
    switch (kind) {
      case "transfer": {
        const token = chain.tokens[tokenPosition()]!
        const from = sender(chain.holders.get(token)!)
        txs.push({
          kind: TxKind.Transfer,
          sender: from,
          target: token,
          a: recipient(),
          b: 0,
          amount: 1e3 + rng.int(1e6)
        })
        break
      }
      case "approve": {
        const token = chain.tokens[tokenPosition()]!
        const spender = rng.chance(0.5) ? users + chain.router : recipient()
        txs.push({ kind: TxKind.Approve, sender: sender(users), target: token, a: spender, b: 0, amount: 1e9 })
        break
      }
      case "swap": {
        const inPosition = tokenPosition()
        const tokenIn = chain.tokens[inPosition]!
        let tokenOut = rng.chance(workload.directSwapShare)
          ? tokenHub(chain, inPosition)
          : chain.tokens[tokenPosition()]!
        if (tokenOut === tokenIn) tokenOut = chain.hubs[(chain.hubs.indexOf(tokenIn) + 1) % hubCount]!
        const user = sender(chain.allowed.get(tokenIn)!)
        txs.push({
          kind: TxKind.Swap,
          sender: user,
          target: chain.router,
          a: tokenIn,
          b: tokenOut,
          amount: 1e4 + rng.int(1e6)
        })
        break
      }
      case "mint": {
        const list = chain.mintLists[rng.zipf(chain.mintLists.length, 1)]!
        let walk = 0
        while (walk < chain.spec.mintWalkMax && rng.chance(workload.mintWalkContinue)) walk++
        const bucket = rng.int(chain.spec.mintBuckets)
        const user = sender(chain.holders.get(chain.hubs[2]!)!)
        txs.push({
          kind: TxKind.Mint,
          sender: user,
          target: list,
          a: bucket,
          b: 0,
          amount: Math.floor((walk + 0.5) * PRICE_STEP)
        })
        break
      }
      case "borrow":
      case "repay":
      case "supply": {
        const market = chain.markets[rng.zipf(chain.markets.length, 1)]!
        const user = sender(chain.lendingMembers)
        const txKind = kind === "borrow" ? TxKind.Borrow : kind === "repay" ? TxKind.Repay : TxKind.Supply
        txs.push({ kind: txKind, sender: user, target: market, a: 0, b: 0, amount: 1e3 + rng.int(1e5) })
        break
      }
    }
  }
  return txs
}
