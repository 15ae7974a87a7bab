#!/usr/bin/env bash
# Builds the Release preset (build/release) and runs links_bench, which
# starts its own PostgreSQL cluster and the Release shorten-service of the
# same build tree, loads a tenant of 10^7 links and times ListLinks pages
# (about 10 minutes, 3 GB of disk). Arguments go to links_bench, e.g.
#   tests/bench/links/run.sh --links=1000000
# The test cluster's shared_buffers is 64MB; to measure with a server's
# cache, as docs/benchmarks.md does too:
#   SHORTENER_TEST_PG_CONF='shared_buffers = 2GB' tests/bench/links/run.sh
# Markdown for docs/benchmarks.md goes to stdout, progress and the plans of
# two walks to stderr.
set -euo pipefail
cd "$(dirname "$0")/../../.."
source deploy/local/deps.sh
shortener_install_deps
# -j2: the machines this runs on have two shared cores. Build output goes to
# stderr so that stdout is only the report.
cmake --preset release >&2
cmake --build --preset release --target links_bench shorten-service -j2 >&2
exec build/release/bin/links_bench "$@"
