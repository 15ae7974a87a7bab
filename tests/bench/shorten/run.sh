#!/usr/bin/env bash
# Builds the Release preset (build/release) and runs shorten_bench, which
# starts its own PostgreSQL cluster and the Release shorten-service of the
# same build tree. Arguments go to shorten_bench, e.g.
#   tests/bench/shorten/run.sh --seconds=10 --service_flags="--group_commit_threads=3"
# Markdown for docs/benchmarks.md goes to stdout, progress to stderr.
set -euo pipefail
cd "$(dirname "$0")/../../.."
# -j2: the machines this runs on have two shared cores. Build output goes to
# stderr so that stdout is only the report.
cmake --preset release >&2
cmake --build --preset release --target shorten_bench shorten-service -j2 >&2
exec build/release/bin/shorten_bench "$@"
