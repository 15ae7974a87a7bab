#!/usr/bin/env bash
# Builds the Release preset (build/release) and runs clicks_bench, which
# starts its own PostgreSQL cluster and the Release shorten-service,
# redirect-edge and shortenctl of the same build tree; needs wrk and taskset. Arguments go
# to clicks_bench, e.g.
#   tests/bench/clicks/run.sh --rounds=7 --phases=redirects
# Markdown for docs/benchmarks.md goes to stdout, progress to stderr.
set -euo pipefail
cd "$(dirname "$0")/../../.."
source deploy/local/deps.sh
shortener_install_deps
if ! command -v wrk >/dev/null 2>&1; then
  sudo_cmd=""
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
  $sudo_cmd apt-get update -qq >&2
  $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wrk >&2
fi
# -j2: the machines this runs on have two shared cores. Build output goes to
# stderr so that stdout is only the report.
cmake --preset release >&2
cmake --build --preset release --target clicks_bench shorten-service redirect-edge shortenctl -j2 >&2
exec build/release/bin/clicks_bench "$@"
