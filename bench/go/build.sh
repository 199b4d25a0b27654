#!/usr/bin/env bash
# Builds the Go peer-benchmark tools (bench/go/etcdload) OFFLINE from Debian packages.
#
# Why: the etcd peer benchmark must not be limited by its client, so it drives etcd with
# etcd's own Go client (clientv3). Only the npm registry and Debian apt are reachable here
# (no Go module proxy), so the client sources come from Debian's golang-etcd-server-dev,
# which installs etcd 3.4.23 and every dependency under /usr/share/gocode/src. We build in
# GOPATH mode (GO111MODULE=off, GOPATH=<scratch>:/usr/share/gocode): no go.mod, no network.
#
# Usage:
#   bash bench/go/build.sh [OUT]   # installs apt packages if missing, builds etcdload to OUT unless it exists
#   source bench/go/build.sh && reef_install_go_deps && reef_build_etcdload [OUT]
# OUT defaults to ${REEF_GO_BIN_DIR:-${TMPDIR:-/tmp}/reef-bench-go}/etcdload-<hash>, <hash> being the first
# 12 hex digits of sha256(etcdload/*.go in C order, then build.sh): the path bench/src/peers/etcd-load.ts
# looks for, so a bootstrap that runs this script saves the tests and the bench the ~20 s first build.
# The path is printed on stdout. REEF_GO_FORCE=1 rebuilds an existing OUT.
# REEF_NO_APT=1 skips the apt install step (then the build fails if go / the sources are missing).
# Environment of the build itself: GO111MODULE=off GOPATH=<scratch>:/usr/share/gocode GOFLAGS= GOPROXY=off
# CGO_ENABLED=0 (static binary), GOCACHE defaulting to ~/.cache/go-build.
# Also installs the runtime tools the peer benchmark uses: etcd-server, etcd-client, redis-server, redis-tools.

reef_go_apt_packages=(golang-go golang-etcd-server-dev etcd-server etcd-client redis-server redis-tools)

reef_install_go_deps() {
  local missing=()
  local p
  for p in "${reef_go_apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ "${#missing[@]}" -eq 0 ]; then return 0; fi
  if [ "${REEF_NO_APT:-}" = "1" ]; then
    echo "build.sh: missing apt packages: ${missing[*]} (REEF_NO_APT=1, not installing)" >&2
    return 0
  fi
  local sudo=""
  if [ "$(id -u)" != "0" ]; then sudo="sudo"; fi
  echo "build.sh: apt-get install ${missing[*]}" >&2
  $sudo apt-get update -qq >&2 || return 1
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 || return 1
  # Debian's etcd-server package starts a system etcd on 2379/2380; the benchmark starts its own
  # clusters on free ports, so that service is only in the way.
  if command -v systemctl >/dev/null 2>&1; then $sudo systemctl disable --now etcd >/dev/null 2>&1 || true; fi
}

reef_etcdload_default_out() {
  local here hash
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  hash="$(cd "$here" && LC_ALL=C cat etcdload/*.go build.sh | sha256sum | cut -c1-12)" || return 1
  echo "${REEF_GO_BIN_DIR:-${TMPDIR:-/tmp}/reef-bench-go}/etcdload-$hash"
}

reef_build_etcdload() {
  local here
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  local out="${1:-}"
  if [ -z "$out" ]; then out="$(reef_etcdload_default_out)" || return 1; fi
  if [ -x "$out" ] && [ "${REEF_GO_FORCE:-}" != "1" ]; then
    echo "$out"
    return 0
  fi
  if ! command -v go >/dev/null 2>&1; then
    echo "build.sh: go not found (apt-get install golang-go)" >&2
    return 1
  fi
  if [ ! -d /usr/share/gocode/src/go.etcd.io/etcd/clientv3 ]; then
    echo "build.sh: /usr/share/gocode/src/go.etcd.io/etcd/clientv3 missing (apt-get install golang-etcd-server-dev)" >&2
    return 1
  fi
  mkdir -p "$(dirname "$out")" || return 1
  local scratch
  scratch="$(mktemp -d)" || return 1
  local gocache="${GOCACHE:-}"
  if [ -z "$gocache" ]; then
    if [ -n "${XDG_CACHE_HOME:-}${HOME:-}" ]; then gocache="${XDG_CACHE_HOME:-$HOME/.cache}/go-build"; else gocache="${TMPDIR:-/tmp}/reef-bench-go/gocache"; fi
  fi
  # Build to a temp name and rename, so concurrent builders never see a half-written binary.
  local tmp="$out.tmp.$$"
  (
    cd "$here/etcdload" &&
      env GO111MODULE=off GOPATH="$scratch:/usr/share/gocode" GOFLAGS= GOPROXY=off GOTOOLCHAIN=local \
        GOCACHE="$gocache" CGO_ENABLED=0 go build -trimpath -o "$tmp" .
  )
  local rc=$?
  rm -rf "$scratch"
  if [ $rc -ne 0 ]; then
    rm -f "$tmp"
    return $rc
  fi
  mv -f "$tmp" "$out" && echo "$out"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  reef_install_go_deps
  reef_build_etcdload "${1:-}"
fi
