#!/usr/bin/env bash
# Installs the Debian 12 packages the build, the tests and the local run need,
# when any is missing. Sourced by run.sh and test.sh; safe to run on its own.
set -euo pipefail

SHORTENER_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler grpc-proto
  libabsl-dev libpqxx-dev libpq-dev libssl-dev libcurl4-openssl-dev libidn2-dev catch2 libboost1.81-dev zlib1g-dev curl
  libmaxminddb-dev libjemalloc-dev
  libqrencode-dev libpng-dev  # GetQrCode's symbols and PNGs (lib/qr)
  libzbar-dev librsvg2-bin  # the QR tests read images back with zbar, SVGs drawn by rsvg-convert
  prometheus-cpp-dev  # shorten-service's /metrics (links only its core library)
  postgresql postgresql-contrib
  postgresql-15-hll  # HyperLogLog sketches of the click rollups (migration 0009)
  openssl  # the tests make their TLS certificates with it
  libmaxmind-db-writer-perl  # the GeoIP tests write a tiny MaxMind database with it
  clang-14 libclang-rt-14-dev  # libFuzzer and the fuzz build (tests/fuzz/run.sh)
  clang-format-14  # the format check in test.sh (.clang-format)
  python3  # tests/layout_check.py (ctest tests/layout)
  systemd  # systemd-analyze and a systemd to run the units under (tests/deploy/systemd_check.sh)
)

# The container images and their smoke test (deploy/container/build.sh,
# tests/deploy/container_smoke.sh): installed only by the steps that use them
# (`deps.sh --containers`, shortener_install_container_deps). runc: Debian's
# default crun is not installed (podman runs with --runtime runc here);
# catatonit: the pause process of a pod's infra container.
SHORTENER_CONTAINER_PACKAGES=(podman runc catatonit uidmap mmdebstrap binutils)

shortener_install_deps() {
  shortener_install_packages "${SHORTENER_PACKAGES[@]}"
}

shortener_install_container_deps() {
  shortener_install_packages "${SHORTENER_CONTAINER_PACKAGES[@]}"
}

# Installs those of the given packages that are missing (nothing when none is).
shortener_install_packages() {
  local missing=()
  local p
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  echo "installing missing packages: ${missing[*]}" >&2
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  # env inside sudo: sudo drops DEBIAN_FRONTEND from the caller's environment.
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
}

# The Kubernetes manifests' check (tests/deploy/k8s_check.sh): PyYAML for its
# policy check; Node.js and npm from Debian when there is no npm at all (a
# Node.js from elsewhere keeps its own npm); then the pinned tools of
# tests/deploy/k8s-tools (kustomize, the Kubernetes 1.27 schemas) installed by
# `npm ci` into the cache directory $1, outside the repository, again only
# when the lock file changed. Returns 1 when npm cannot install them (no
# network, no registry): the check then prints what it skips.
shortener_install_k8s_check_tools() {
  local dir=$1
  local tools=tests/deploy/k8s-tools
  shortener_install_packages python3-yaml
  if ! command -v npm >/dev/null 2>&1; then
    shortener_install_packages nodejs npm || return 1
  fi
  if [ -d "$dir/node_modules" ] && cmp -s "$tools/package-lock.json" "$dir/package-lock.json"; then
    return 0
  fi
  mkdir -p "$dir"
  rm -f "$dir/package-lock.json"
  cp "$tools/package.json" "$dir/package.json"
  cp "$tools/package-lock.json" "$dir/package-lock.json.new"
  mv "$dir/package-lock.json.new" "$dir/package-lock.json"
  if ! (cd "$dir" && timeout 300 npm ci --no-audit --no-fund --loglevel=error \
    --fetch-retries=1 --fetch-retry-mintimeout=2000 --fetch-timeout=30000 >&2); then
    rm -f "$dir/package-lock.json"  # not installed: try again next time
    return 1
  fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  shortener_install_deps
  if [ "${1:-}" = "--containers" ]; then
    shortener_install_container_deps
  fi
fi
