#!/usr/bin/env bash
# Builds the Release preset (build/release) and runs edge_bench, which starts
# its own PostgreSQL cluster, the Release shorten-service and redirect-edge of
# the same build tree, and Debian's nginx; needs nginx, wrk, taskset and
# PostgreSQL 15 (pgbench) installed. Arguments go to edge_bench, e.g.
#   tests/bench/edge/run.sh --rounds=7 --memory_entries=0
# Markdown for docs/benchmarks.md goes to stdout, progress to stderr.
set -euo pipefail
cd "$(dirname "$0")/../../.."
source deploy/local/deps.sh
shortener_install_deps
# The references: nginx and wrk only matter here, not to the build or tests.
for tool in nginx wrk; do
  if ! command -v "$tool" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$tool" ]; then
    sudo_cmd=""
    if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
    $sudo_cmd apt-get update -qq >&2
    $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$tool" >&2
  fi
done
# -j2: the machines this runs on have two shared cores. Build output goes to
# stderr so that stdout is only the report.
cmake --preset release >&2
cmake --build --preset release --target edge_bench shorten-service redirect-edge -j2 >&2
exec build/release/bin/edge_bench "$@"
