/**
 * The initial value of every key, the paper's (k, 0): a pure function of the key, so a worker can materialise an
 * object nobody has touched yet and the reference executor agrees with it.
 */
import { TOKEN_PREFIX, tokenGenesis } from "./token.js"
import { TPCC_PREFIX, tpccGenesis } from "./tpcc.js"
import { ycsbGenesis } from "./ycsb.js"

export const genesisValue = (key: string): Uint8Array =>
  key.startsWith(TOKEN_PREFIX) ? tokenGenesis() : key.startsWith(TPCC_PREFIX) ? tpccGenesis(key) : ycsbGenesis(key)
