#!/bin/sh
# Prints the ID allocation figures for docs/benchmarks.md. Builds nothing:
#   cmake --preset release && cmake --build --preset release --target idalloc_bench
#   tests/bench/idalloc/run.sh [path/to/idalloc_bench]
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd)
bench=${1:-$root/build/release/bin/idalloc_bench}
if [ ! -x "$bench" ]; then
  echo "run.sh: $bench not found; build the release preset first" >&2
  exit 1
fi
echo "\$ $bench   # $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)"
exec "$bench"
