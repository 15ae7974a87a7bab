#!/usr/bin/env bash
# Runs every test: installs missing packages, checks that every C++ and
# proto file is formatted as .clang-format says (clang-format 14, Debian
# 12's), builds into build/ and runs ctest (unit tests, integration tests on
# private PostgreSQL clusters the tests start themselves, end-to-end tests
# with the real binaries). Then the container images of those binaries and
# their smoke test (tests/deploy/container_smoke.sh).
# Then the fuzz targets (tests/fuzz, built with clang in build/fuzz): every
# seed and recorded crash input once, then each target for
# SHORTENER_FUZZ_SECONDS (default 20) from its seeds, one per core. Then the
# tests of concurrent code (CTest label `concurrent`) again under
# ThreadSanitizer (preset tsan), and every test under AddressSanitizer + UBSan
# (preset asan).
#   deploy/local/test.sh                 # everything
#   deploy/local/test.sh -R codec        # extra arguments go to the main ctest run
#   SHORTENER_SKIP_FUZZ=1 deploy/local/test.sh         # skip the fuzz step
#   SHORTENER_SKIP_CONTAINERS=1 deploy/local/test.sh   # skip the container images' smoke test
#   SHORTENER_SKIP_SANITIZERS=1 deploy/local/test.sh   # skip the sanitizer passes
#   SHORTENER_SKIP_SYSTEMD=1 deploy/local/test.sh      # skip the systemd units' check
#   SHORTENER_SKIP_K8S=1 deploy/local/test.sh          # skip the Kubernetes manifests' check
set -euo pipefail
cd "$(dirname "$0")/../.."
source deploy/local/deps.sh
shortener_install_deps

jobs=$(nproc)

# Formatting first: it takes seconds and says exactly which line is off.
# Fix with: git ls-files -z '*.cc' '*.h' '*.proto' | xargs -0 clang-format-14 -i
echo "== format: clang-format-14 --dry-run -Werror"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files -z '*.cc' '*.h' '*.proto' | xargs -0 clang-format-14 --dry-run -Werror
else
  find proto lib services edge tests \( -name '*.cc' -o -name '*.h' -o -name '*.proto' \) \
    -print0 | xargs -0 clang-format-14 --dry-run -Werror
fi

# The Kubernetes manifests (deploy/k8s/, docs/deploy.md): rendered, policy and
# Kubernetes 1.27 schema checks, offline once its npm tools are cached (its
# steps print "skipped: ..." where they cannot run). Needs no build: seconds.
if [ -z "${SHORTENER_SKIP_K8S:-}" ]; then
  echo "== Kubernetes manifests: tests/deploy/k8s_check.sh"
  tests/deploy/k8s_check.sh
else
  echo "== Kubernetes manifests: skipped: SHORTENER_SKIP_K8S is set"
fi

# The Grafana dashboard (deploy/grafana/): valid JSON, and every metric its
# queries use is in a metric table of docs/edge.md or docs/operations.md.
echo "== Grafana dashboard: tests/deploy/grafana_check.py"
python3 tests/deploy/grafana_check.py .

# The same build dir and type as run.sh, so switching between the two
# commands does not rebuild everything.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHORTENER_BUILD_TESTS=ON \
  -DSHORTENER_BUILD_BENCH=ON >/dev/null
cmake --build build -j "$jobs"
cd build
# --no-tests=error: a misconfigured build that registers no test must fail.
ctest --output-on-failure --no-tests=error --timeout 300 -j "$jobs" "$@"
cd ..

if [ -z "${SHORTENER_SKIP_CONTAINERS:-}" ]; then
  # docs/deploy.md, "Container images": the images of build/bin's binaries
  # and their smoke test on a pod (about 1.5 min); prints "skipped: <reason>"
  # where podman cannot run a container here.
  echo "== container images: build and smoke test"
  tests/deploy/container_smoke.sh --binaries build/bin
else
  echo "== container images: skipped: SHORTENER_SKIP_CONTAINERS is set"
fi

# The systemd units (deploy/systemd/, docs/deploy.md): systemd-analyze verify
# and security against build/bin, then the units run under a systemd of their
# own where the machine allows it (it prints what it skips). About 15 s.
if [ -z "${SHORTENER_SKIP_SYSTEMD:-}" ]; then
  echo "== systemd units: tests/deploy/systemd_check.sh"
  tests/deploy/systemd_check.sh build
else
  echo "== systemd units: skipped: SHORTENER_SKIP_SYSTEMD is set"
fi

if [ -z "${SHORTENER_SKIP_FUZZ:-}" ]; then
  # docs/fuzzing.md. A crash, leak or timeout fails the step and prints the
  # input. One target per core; about 5 minutes on 2 cores, the clang build
  # included, with the default 20 s per target.
  echo "== fuzz targets: regression corpora, then ${SHORTENER_FUZZ_SECONDS:-20} s each"
  tests/fuzz/run.sh --jobs "$jobs" --regression
  tests/fuzz/run.sh --jobs "$jobs" "${SHORTENER_FUZZ_SECONDS:-20}"
fi

if [ -z "${SHORTENER_SKIP_SANITIZERS:-}" ]; then
  # CMakePresets.json: `tsan` (build/tsan) runs the tests labelled
  # `concurrent`; `asan` (ASan + UBSan, build/asan) runs them all. A sanitizer
  # report makes the test exit non-zero, which fails it.
  for preset in tsan asan; do
    echo "== tests under the $preset preset"
    cmake --preset "$preset" >/dev/null
    cmake --build --preset "$preset" -j "$jobs"
    ctest --preset "$preset" --no-tests=error --timeout 600 -j "$jobs"
  done
fi
