#!/usr/bin/env bash
# Builds the OCI images of shorten-service (with shortenctl) and
# redirect-edge with no container registry (docs/deploy.md, "Container
# images"): a Release build of the binaries, a minimal Debian 12 root made by
# mmdebstrap holding only the packages of the shared libraries the binaries
# load (runtime-packages.sh derives them from the binaries), a non-root user,
# no shell, imported with `podman import`, the binary as the entrypoint.
# Besides: /bin/sleep (coreutils), for Kubernetes' preStop hook (deploy/k8s).
#   deploy/container/build.sh                    # both images, tagged 0.1.0
#   deploy/container/build.sh --tag 1.2.0
#   deploy/container/build.sh --binaries build/bin  # package binaries built elsewhere (debug info stripped)
#   deploy/container/build.sh --test-postgres    # also the smoke test's PostgreSQL 15 image
#   deploy/container/build.sh --containerfile    # podman build of deploy/container/*.Containerfile
#                                                # (FROM debian:bookworm-slim: needs a registry)
#   deploy/container/build.sh --stage-only       # binaries and package lists for a docker build
# Images: localhost/shortener/shorten-service:TAG, localhost/shortener/redirect-edge:TAG
# (and localhost/shortener/test-postgres:TAG). Needs root, or a user with
# subordinate ids (mmdebstrap's unshare mode); packages come from the Debian
# mirror apt uses here (SHORTENER_DEBIAN_MIRROR overrides: a mirror URL or a
# sources file). Build directory: build/container (SHORTENER_CONTAINER_BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/../.."

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}

# The release deploy/k8s's manifests pin; the commit is in the images'
# org.opencontainers.image.revision label.
tag="0.1.0"
binaries=""
test_postgres=0
mode=mmdebstrap
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) tag="$2"; shift 2 ;;
    --binaries) binaries="$2"; shift 2 ;;
    --test-postgres) test_postgres=1; shift ;;
    --containerfile) mode=containerfile; shift ;;
    --stage-only) mode=stage; shift ;;
    -h | --help) usage ;;
    *) echo "unknown argument: $1" >&2; usage ;;
  esac
done
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  revision="$revision-dirty"
fi

if [ "$test_postgres" -eq 1 ] && [ "$mode" != mmdebstrap ]; then
  echo "--test-postgres is made with mmdebstrap only" >&2
  exit 2
fi
tools=(podman)
if [ "$mode" = mmdebstrap ]; then tools+=(mmdebstrap); fi
if [ "$mode" = stage ]; then tools=(); fi
for tool in "${tools[@]}"; do
  if ! command -v "$tool" >/dev/null; then
    echo "$tool is missing: deploy/local/deps.sh --containers installs it" >&2
    exit 1
  fi
done

build_dir=${SHORTENER_CONTAINER_BUILD_DIR:-build/container}
if [ -z "$binaries" ]; then
  echo "== Release build of the binaries ($build_dir)"
  launcher=()
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSHORTENER_BUILD_TESTS=OFF \
    -DSHORTENER_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
  cmake --build "$build_dir" -j "$(nproc)" --target shorten-service shortenctl redirect-edge
  binaries="$build_dir/bin"
fi

# The Debian sources the root's packages come from: the host's, so that a
# machine behind its own mirror builds as its apt does.
mirror=()
if [ -n "${SHORTENER_DEBIAN_MIRROR:-}" ]; then
  mirror=("$SHORTENER_DEBIAN_MIRROR")
elif [ -f /etc/apt/sources.list.d/debian.sources ]; then
  mirror=(/etc/apt/sources.list.d/debian.sources)
fi

stage_root="$build_dir/images"
mkdir -p "$stage_root"
stage_root=$(cd "$stage_root" && pwd)
finish_root="$(pwd)/deploy/container/finish-root.sh"

# make_image NAME USER UID PACKAGES CHANGES... : the root (mmdebstrap, extract
# variant: the packages' files only, no maintainer scripts, no dpkg/apt) with
# the binaries in $stage_root/NAME/bin, imported as
# localhost/shortener/NAME:TAG with the Containerfile-style CHANGES.
make_image() {
  local name=$1 user=$2 uid=$3 packages=$4
  shift 4
  local stage="$stage_root/$name"
  local hook_args="$stage/bin $user $uid" excludes
  # The product images: of coreutils only /bin/sleep (Kubernetes 1.27 has no
  # sleep action for a preStop hook), and no other program (ldconfig, ldd,
  # iconv... of libc6).
  excludes=(--dpkgopt='path-exclude=/bin/*' --dpkgopt='path-include=/bin/sleep'
    --dpkgopt='path-exclude=/sbin/*' --dpkgopt='path-exclude=/usr/bin/*'
    --dpkgopt='path-exclude=/usr/sbin/*' --dpkgopt='path-exclude=/usr/libexec/*')
  if [ "$name" = test-postgres ]; then
    # initdb starts the server through /bin/sh. PostgreSQL's JIT (LLVM, Z3),
    # Perl (postgresql-common's cluster tools) and locale sources are not
    # needed by a test cluster started with jit=off and --locale=C.
    hook_args="$hook_args --shell"
    excludes=(--dpkgopt='path-exclude=/usr/lib/x86_64-linux-gnu/libLLVM*'
      --dpkgopt='path-exclude=/usr/lib/x86_64-linux-gnu/libz3*'
      --dpkgopt='path-exclude=/usr/lib/postgresql/15/lib/llvmjit*'
      --dpkgopt='path-exclude=/usr/lib/postgresql/15/lib/bitcode/*'
      --dpkgopt='path-exclude=/usr/share/perl/*' --dpkgopt='path-exclude=/usr/lib/x86_64-linux-gnu/perl*'
      --dpkgopt='path-exclude=/usr/share/i18n/*')
  fi
  rm -f "$stage/root.tar"
  echo "== $name: mmdebstrap bookworm + $(echo "$packages" | wc -w) packages"
  # Documentation, manual pages, translations and iconv modules are not
  # needed by a daemon (glibc's built-in UTF-8 and ASCII conversions remain).
  mmdebstrap --variant=extract --mode=auto --quiet --format=tar \
    --include="$(echo "$packages" | tr ' \n' ',,')" \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/lintian/*' \
    --dpkgopt='path-exclude=/usr/share/gdb/*' --dpkgopt='path-exclude=/usr/share/gcc/*' \
    --dpkgopt='path-exclude=/usr/lib/x86_64-linux-gnu/gconv/*' "${excludes[@]}" \
    --extract-hook="$finish_root \"\$1\" $hook_args" --skip=cleanup/apt,cleanup/mmdebstrap \
    bookworm "$stage/root.tar" "${mirror[@]}"
  local previous
  previous=$(image_id "$name")
  podman import --quiet --message "shortener $name $revision" \
    --change "USER $uid:$uid" --change "WORKDIR /var/lib/shortener" \
    --change "LABEL org.opencontainers.image.title=$name" \
    --change "LABEL org.opencontainers.image.revision=$revision" \
    --change "LABEL org.opencontainers.image.source=deploy/container/build.sh" \
    "$@" "$stage/root.tar" "localhost/shortener/$name:$tag" >/dev/null
  rm -f "$stage/root.tar"
  drop_if_untagged "$previous"
}

# A rebuild under the same tag leaves the previous image untagged: drop it.
drop_if_untagged() {
  local image=$1
  if [ -n "$image" ] && [ -z "$(podman image inspect --format '{{.RepoTags}}' "$image" |
    tr -d '[]')" ]; then
    podman rmi "$image" >/dev/null 2>&1 || true
  fi
}

# The id of the image localhost/shortener/NAME:TAG, if there is one.
image_id() {
  podman image inspect --format '{{.Id}}' "localhost/shortener/$1:$tag" 2>/dev/null || true
}

# stage_binaries NAME BINARY... : copies without debug information (a
# RelWithDebInfo binary is mostly DWARF; symbols stay for backtraces).
stage_binaries() {
  local name=$1 binary
  shift
  rm -rf "${stage_root:?}/$name"
  mkdir -p "$stage_root/$name/bin"
  for binary in "$@"; do
    if [ ! -x "$binaries/$binary" ]; then
      echo "missing $binaries/$binary (build it, or leave out --binaries)" >&2
      exit 1
    fi
    objcopy --strip-debug "$binaries/$binary" "$stage_root/$name/bin/$binary"
  done
}

# build_product_image NAME CHANGES...: the image of $stage_root/NAME/bin
# with the runtime packages derived from those binaries (kept in
# $stage_root/NAME/packages), by mmdebstrap or by NAME.Containerfile, whose
# instructions say the same as CHANGES.
build_product_image() {
  local name=$1 packages previous
  shift
  # Derived before make_image's call: a failure inside "$(...)" in a
  # command's arguments would not stop the script. coreutils: the preStop
  # hook's sleep.
  packages=$(deploy/container/runtime-packages.sh "$stage_root/$name"/bin/*)
  packages=$(printf '%s\ncoreutils\n' "$packages" | sort -u)
  printf '%s\n' "$packages" >"$stage_root/$name/packages"
  case "$mode" in
    stage) echo "staged $stage_root/$name (bin/, packages)" ;;
    containerfile)
      echo "== $name: podman build -f deploy/container/$name.Containerfile"
      previous=$(image_id "$name")
      podman build --quiet --pull=missing -f "deploy/container/$name.Containerfile" \
        --build-arg PACKAGES="$(echo "$packages" | tr '\n' ' ')" \
        --label "org.opencontainers.image.revision=$revision" \
        -t "localhost/shortener/$name:$tag" "$stage_root/$name" >/dev/null
      drop_if_untagged "$previous"
      ;;
    *) make_image "$name" shortener 10001 "$packages" "$@" ;;
  esac
}

stage_binaries shorten-service shorten-service shortenctl
build_product_image shorten-service \
  --change 'ENTRYPOINT ["/usr/local/bin/shorten-service"]' --change 'EXPOSE 50051'
stage_binaries redirect-edge redirect-edge
build_product_image redirect-edge \
  --change 'ENTRYPOINT ["/usr/local/bin/redirect-edge"]' --change 'EXPOSE 8080' \
  --change 'EXPOSE 9090'
if [ "$mode" = stage ]; then exit 0; fi

# The packages of the extensions the migrations create: the Debian package
# that holds each one's control file on this machine (deps.sh installs
# them; contrib's are in postgresql-15 itself).
extension_packages() {
  local names name control
  mapfile -t names < <(grep -hoiE 'CREATE EXTENSION +(IF NOT EXISTS +)?"?[a-z0-9_]+' \
    deploy/postgres/migrations/*.sql | awk '{ print $NF }' | tr -d '"' | sort -u)
  for name in "${names[@]}"; do
    control="/usr/share/postgresql/15/extension/$name.control"
    if [ ! -f "$control" ]; then
      echo "the migrations create extension $name, and $control is missing here:" \
        "install its package (deploy/local/deps.sh)" >&2
      return 1
    fi
    dpkg-query -S "$control" | cut -d: -f1
  done
}

images=(shorten-service redirect-edge)
if [ "$test_postgres" -eq 1 ]; then
  # Debian's PostgreSQL 15 and the extensions the migrations create, for the
  # smoke test (tests/deploy/container_smoke.sh): a fresh cluster in the container on each start, trust authentication,
  # TCP on the pod's loopback, SIGINT (PostgreSQL's fast shutdown) to stop.
  # Not a production database image.
  rm -rf "${stage_root:?}/test-postgres"
  mkdir -p "$stage_root/test-postgres/bin"
  install -m 0755 deploy/container/test-postgres-start.sh "$stage_root/test-postgres/bin/"
  packages=$(printf '%s\n' postgresql-15 dash; extension_packages)
  make_image test-postgres postgres 10002 "$packages" \
    --change 'ENTRYPOINT ["/usr/local/bin/test-postgres-start.sh"]' --change 'EXPOSE 5432' \
    --change 'STOPSIGNAL SIGINT'
  images+=(test-postgres)
fi

echo "== images"
for name in "${images[@]}"; do
  size=$(podman image inspect --format '{{.Size}}' "localhost/shortener/$name:$tag")
  printf '  localhost/shortener/%s:%s  %d MB\n' "$name" "$tag" $(((size + 500000) / 1000000))
done
