#!/usr/bin/env bash
# Runs every test: installs missing packages, builds into build/ and runs
# ctest (unit tests, integration tests on private PostgreSQL clusters the
# tests start themselves, end-to-end tests with the real binaries).
# Then the tests of concurrent code (CTest label `concurrent`) again under
# ThreadSanitizer (the `tsan` preset, build/tsan).
#   deploy/local/test.sh                 # everything
#   deploy/local/test.sh -R codec        # extra arguments go to the main ctest run
#   SHORTENER_SKIP_TSAN=1 deploy/local/test.sh   # skip the TSan pass
set -euo pipefail
cd "$(dirname "$0")/../.."
source deploy/local/deps.sh
shortener_install_deps

jobs=$(nproc)
# The same build dir and type as run.sh, so switching between the two
# commands does not rebuild everything.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHORTENER_BUILD_TESTS=ON \
  -DSHORTENER_BUILD_BENCH=ON >/dev/null
cmake --build build -j "$jobs"
cd build
# --no-tests=error: a misconfigured build that registers no test must fail.
ctest --output-on-failure --no-tests=error --timeout 300 -j "$jobs" "$@"
cd ..

if [ -z "${SHORTENER_SKIP_TSAN:-}" ]; then
  echo "== concurrent tests under ThreadSanitizer"
  cmake --preset tsan >/dev/null
  cmake --build --preset tsan -j "$jobs"
  # TSan exits 66 from a test that had a report, which fails it.
  ctest --preset tsan --no-tests=error --timeout 600 -j "$jobs"
fi
