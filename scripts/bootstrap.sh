#!/usr/bin/env bash
# Installs everything Reef needs on a machine with only Node 20, npm and apt, then builds.
# Idempotent: a second run only checks. Used by scripts/dev.sh and .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

PNPM_VERSION=12.4.2
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then as_root apt-get update -qq; apt_updated=1; fi
  # Waits for another apt (a second bootstrap on the same machine) instead of failing on its lock.
  DEBIAN_FRONTEND=noninteractive as_root apt-get -o DPkg::Lock::Timeout=600 install -y -qq "$@" >/dev/null
}

# nats-server from Debian (2.9): the embedded default of `reef up` and the fixture of the integration tests.
if ! command -v nats-server >/dev/null 2>&1 && [ ! -x /usr/sbin/nats-server ]; then
  echo "bootstrap: installing nats-server (apt)"
  apt_install nats-server
fi
# redis-server from Debian (with redis-tools' redis-benchmark, a dependency): a segment backend of AirDB and the
# Redis peer of `pnpm bench popuc`; their tests (bench/src/peers/redis.test.ts among them) start their own.
if ! command -v redis-server >/dev/null 2>&1 && [ ! -x /usr/bin/redis-server ]; then
  echo "bootstrap: installing redis-server (apt)"
  apt_install redis-server redis-tools
  # Debian's package may start a system service on 6379; Reef starts its own servers on free ports.
  if command -v systemctl >/dev/null 2>&1; then as_root systemctl disable --now redis-server >/dev/null 2>&1 || true; fi
fi
# prometheus from Debian (2.42): the CLI test scrapes every actor of a cluster with it and evaluates each query of
# the Grafana dashboard (observability/grafana). Its recommended node exporter is not needed.
if ! command -v prometheus >/dev/null 2>&1; then
  echo "bootstrap: installing prometheus (apt)"
  apt_install --no-install-recommends prometheus
  # Debian's package may start a system service on 9090; the test starts its own on a free port.
  if command -v systemctl >/dev/null 2>&1; then as_root systemctl disable --now prometheus >/dev/null 2>&1 || true; fi
fi
# iproute2 (`ip`): the hosts harness (tests/src/hosts) makes network namespaces, veths and a bridge with it.
if ! command -v ip >/dev/null 2>&1; then
  echo "bootstrap: installing iproute2 (apt)"
  apt_install iproute2
fi
# openssl from Debian: `reef up --secure`/`--tls` and the security tests make a local CA and certificates with it.
if ! command -v openssl >/dev/null 2>&1; then
  echo "bootstrap: installing openssl (apt)"
  apt_install openssl
fi
# A C++ toolchain: zstd-napi (the Ira hint's compression) builds from its bundled source at install.
if ! command -v g++ >/dev/null 2>&1 || ! command -v make >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
  echo "bootstrap: installing g++, make, python3 (apt)"
  apt_install g++ make python3
fi
# jemalloc: the allocator of every actor process reef starts (allocatorEnv in libs/devkit/src/reef-command.ts);
# glibc's malloc leaves a replica that has served a load ~90 MB larger once idle.
have_jemalloc() {
  # The paths allocatorEnv looks in (JEMALLOC_PATHS).
  for f in /usr/lib/{x86_64,aarch64}-linux-gnu/libjemalloc.so.2 /usr/lib64/libjemalloc.so.2 /usr/lib/libjemalloc.so.2; do
    [ -e "$f" ] && return 0
  done
  return 1
}
if ! have_jemalloc; then
  echo "bootstrap: installing jemalloc (apt)"
  apt_install libjemalloc2
fi
# Go with Debian's grpc-go and protobuf-go sources: tests/src/grpc-reflection.test.ts builds a reflection client
# on them (offline, GOPATH mode), which checks every server's descriptors as grpcurl does.
if ! command -v go >/dev/null 2>&1 || [ ! -d /usr/share/gocode/src/google.golang.org/grpc/reflection ] \
  || [ ! -d /usr/share/gocode/src/google.golang.org/protobuf/reflect/protodesc ]; then
  echo "bootstrap: installing Go, golang-google-grpc-dev, golang-google-protobuf-dev (apt)"
  apt_install --no-install-recommends golang-go golang-google-grpc-dev golang-google-protobuf-dev
fi
# The POPUC benchmark compares against real etcd (driven by its own Go client, built offline from Debian's
# sources); install and build them only when asked: REEF_BENCH_PEERS=1 bash scripts/bootstrap.sh
# (without them the etcd test skips and says how to enable it).
if [ "${REEF_BENCH_PEERS:-0}" = 1 ]; then
  echo "bootstrap: etcd and the Go etcd load generator (apt + offline go build)"
  bash bench/go/build.sh >/dev/null
  # Native ZooKeeper for `pnpm bench redis`, driven by its own Java client (bench/java/ZkLoad.java, which javac
  # from the JDK compiles on first use).
  if [ ! -e /usr/share/java/zookeeper.jar ] || ! command -v javac >/dev/null 2>&1; then
    echo "bootstrap: installing zookeeper and a JDK (apt)"
    apt_install --no-install-recommends zookeeper default-jdk-headless
    # Debian's zookeeperd would start a system service on 2181; the benchmark starts its own ensembles.
    if command -v systemctl >/dev/null 2>&1; then as_root systemctl disable --now zookeeper >/dev/null 2>&1 || true; fi
  fi
fi

# pnpm pinned exactly (no packageManager field: newer pnpm then refuses the registry signature).
if [ "$(pnpm --version 2>/dev/null || true)" != "$PNPM_VERSION" ]; then
  echo "bootstrap: installing pnpm $PNPM_VERSION"
  npm install -g -E "pnpm@$PNPM_VERSION" >/dev/null
fi

# node-gyp must build against the local Node headers (no download): .npmrc sets nodedir=/usr too.
export npm_config_nodedir=/usr
pnpm install --frozen-lockfile --reporter=silent
pnpm build
