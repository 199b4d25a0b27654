/**
 * Peers the POPUC replicated KV benchmark compares against in the same run on the same machine:
 * a real etcd cluster of the same size N on loopback (driven by etcd's own Go client, so the
 * client is not the limit) and an unreplicated, non-persistent Redis (driven by redis-benchmark).
 */
export {
  ETCD_CLIENT_PORT,
  ETCD_PEER_PORT,
  type EtcdCluster,
  type EtcdClusterOptions,
  type EtcdLeader,
  type EtcdMember,
  type EtcdPlacement,
  etcdMemberHealthy,
  findEtcdBinary,
  startEtcdCluster
} from "./etcd.js"
export {
  benchGoDir,
  buildEtcdLoad,
  type EtcdLoadOptions,
  etcdLoadAvailable,
  etcdLoadBinaryPath,
  parseEtcdLoadOutput,
  runEtcdLoad
} from "./etcd-load.js"
export { coresBusy, type LoadResult, longestStallMs } from "./load.js"
export { freePorts, machineBusyCpuSeconds, procCpuSeconds } from "./proc.js"
export {
  parseRedisBenchmarkCsv,
  type RedisLoadOptions,
  type RedisServer,
  runRedisLoad,
  startRedis
} from "./redis.js"
export {
  runZkLoad,
  startZooKeeperEnsemble,
  type ZkPhase,
  type ZooKeeperEnsemble,
  zookeeperAvailable
} from "./zookeeper.js"
