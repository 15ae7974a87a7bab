#!/usr/bin/env bash
# Installs the Debian 12 packages the build, the tests and the local run need,
# when any is missing. Sourced by run.sh and test.sh; safe to run on its own.
set -euo pipefail

SHORTENER_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler grpc-proto
  libabsl-dev libpqxx-dev libpq-dev libssl-dev libcurl4-openssl-dev libidn2-dev catch2 libboost1.81-dev zlib1g-dev curl
  libmaxminddb-dev libjemalloc-dev
  postgresql postgresql-contrib
  openssl  # the tests make their TLS certificates with it
  libmaxmind-db-writer-perl  # the GeoIP tests write a tiny MaxMind database with it
  clang-14 libclang-rt-14-dev  # libFuzzer and the fuzz build (tests/fuzz/run.sh)
  clang-format-14  # the format check in test.sh (.clang-format)
)

shortener_install_deps() {
  local missing=()
  local p
  for p in "${SHORTENER_PACKAGES[@]}"; do
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

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  shortener_install_deps
fi
