#!/usr/bin/env bash
# Builds the Release preset (build/release) and runs edge_bench, which starts
# its own PostgreSQL cluster, the Release shorten-service and redirect-edge of
# the same build tree, and Debian's nginx; needs nginx, wrk, taskset and
# PostgreSQL 15 (pgbench) installed. Arguments go to edge_bench, e.g.
#   tests/bench/edge/run.sh --rounds=7 --memory_entries=0
# Markdown for docs/benchmarks.md goes to stdout, progress to stderr.
set -euo pipefail
cd "$(dirname "$0")/../../.."
# -j2: the machines this runs on have two shared cores. Build output goes to
# stderr so that stdout is only the report.
cmake --preset release >&2
cmake --build --preset release --target edge_bench shorten-service redirect-edge -j2 >&2
exec build/release/bin/edge_bench "$@"
