#!/usr/bin/env bash
# Prints the Debian packages that hold the shared libraries the given
# binaries load (ldd's closure: direct NEEDED entries and theirs), one per
# line, sorted. Run it where the binaries were built (Debian 12): the
# libraries are found where the dynamic linker finds them and mapped to their
# packages by dpkg. The image's root gets these packages and their hard
# dependencies, nothing else (docs/deploy.md, "Container images").
#   deploy/container/runtime-packages.sh build/container/bin/redirect-edge
set -euo pipefail
if [ $# -eq 0 ]; then
  echo "usage: $0 BINARY..." >&2
  exit 2
fi

# dpkg registers a library under the path its package ships it at; with
# merged /usr the dynamic linker may name it through the other prefix or a
# symlink: each library is looked up as given, as its target and under the
# other prefix, all in one dpkg-query call (one call per path takes seconds).
candidates_of() {
  local path=$1 real
  real=$(readlink -f "$path")
  printf '%s\n' "$path" "$real" "/usr$real" "${real#/usr}"
}

libraries=()
for binary in "$@"; do
  if [ ! -x "$binary" ]; then
    echo "not an executable: $binary" >&2
    exit 1
  fi
  # `lib => /path (addr)` for found libraries, `/lib64/ld-linux... (addr)` for
  # the loader, `lib => not found` for a missing one, linux-vdso without path.
  if ldd "$binary" | grep -q 'not found'; then
    echo "$binary: a library is missing:" >&2
    ldd "$binary" | grep 'not found' >&2
    exit 1
  fi
  while read -r path; do
    libraries+=("$path")
  done < <(ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
done

mapfile -t libraries < <(printf '%s\n' "${libraries[@]}" | sort -u)
mapfile -t candidates < <(for path in "${libraries[@]}"; do candidates_of "$path"; done | sort -u)
# `pkg[:arch][, pkg2]: /path` for each candidate some package holds.
owners=$(dpkg-query -S "${candidates[@]}" 2>/dev/null || true)
for path in "${libraries[@]}"; do
  found=""
  while read -r candidate; do
    # A here-string, not a pipe: awk leaves at the first match, which would
    # kill a writer still writing (SIGPIPE, fatal under pipefail).
    found=$(awk -v p="$candidate" \
      'index($0, ": " p) && substr($0, length($0) - length(p) + 1) == p { sub(/: .*/, ""); print; exit }' \
      <<<"$owners")
    if [ -n "$found" ]; then break; fi
  done < <(candidates_of "$path")
  if [ -z "$found" ]; then
    echo "no Debian package holds $path (needed by a binary): install it from a package" >&2
    exit 1
  fi
  # `libfoo1:amd64` -> `libfoo1`; several owners (a shared path) -> the first.
  printf '%s\n' "$found" | sed 's/, .*//; s/:.*//'
done | sort -u
