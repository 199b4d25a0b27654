#!/usr/bin/env bash
# The two commands of the README, each runnable on a fresh machine:
#   bash scripts/dev.sh up     install, build, start a local cluster, run the demo workload, print results
#   bash scripts/dev.sh test   install, build, run every test (unit, simulation, integration)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
case "${1:-}" in
  up) shift; exec node services/cli/dist/main.js up --workload "$@" ;;
  test) shift; exec pnpm test "$@" ;;
  *) echo "usage: bash scripts/dev.sh up|test" >&2; exit 2 ;;
esac
