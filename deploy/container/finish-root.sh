#!/usr/bin/env bash
# mmdebstrap's extract hook for the images of deploy/container/build.sh:
# completes an extracted Debian 12 root ROOT into an image's file system.
#   finish-root.sh ROOT BIN_DIR USER UID [--shell]
# - the executables of BIN_DIR into /usr/local/bin (root-owned, 0755);
# - /etc/passwd and /etc/group with root and USER (UID, same GID, no login
#   shell), /etc/nsswitch.conf (files, then DNS);
# - /var/lib/shortener, owned by USER, mode 0700: the working directory
#   (spool, secrets written by the service) unless the operator mounts one;
# - /var/lib/dpkg/status listing the packages extracted, so that image
#   scanners (trivy, grype) see what the image holds;
# - /etc/ld.so.cache for the libraries;
# - without apt's and dpkg's configuration, lists, caches and logs, and the
#   host's resolv.conf and hostname (the runtime provides those). build.sh
#   skips mmdebstrap's own clean-up of these (it fails on what is gone).
# --shell: /bin/sh -> dash (the test PostgreSQL image: initdb runs the
# server through a shell); the product images have no shell.
set -euo pipefail
if [ $# -lt 4 ]; then
  echo "usage: $0 ROOT BIN_DIR USER UID [--shell]" >&2
  exit 2
fi
root=$1
bin_dir=$2
user=$3
uid=$4
shell=${5:-}

mkdir -p "$root/usr/local/bin"
for binary in "$bin_dir"/*; do
  install -o 0 -g 0 -m 0755 "$binary" "$root/usr/local/bin/"
done

cat >"$root/etc/passwd" <<EOT
root:x:0:0:root:/root:/usr/sbin/nologin
$user:x:$uid:$uid:$user:/var/lib/shortener:/usr/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
EOT
cat >"$root/etc/group" <<EOT
root:x:0:
$user:x:$uid:
nogroup:x:65534:
EOT
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$root/etc/nsswitch.conf"
chmod 0644 "$root/etc/passwd" "$root/etc/group" "$root/etc/nsswitch.conf"

install -d -o "$uid" -g "$uid" -m 0700 "$root/var/lib/shortener"
mkdir -p "$root/tmp"
chmod 1777 "$root/tmp"

# dpkg's database as an installed system has it (extract does not run dpkg).
mkdir -p "$root/var/lib/dpkg"
: >"$root/var/lib/dpkg/status"
for deb in "$root"/var/cache/apt/archives/*.deb; do
  dpkg-deb --field "$deb" | sed '/^Package:/a Status: install ok installed' \
    >>"$root/var/lib/dpkg/status"
  echo >>"$root/var/lib/dpkg/status"
done

if [ "$shell" = "--shell" ]; then
  mkdir -p "$root/bin"
  ln -sf dash "$root/bin/sh"
fi

ldconfig -r "$root"
rm -rf "$root/var/cache/ldconfig" "$root/etc/fstab" "$root/etc/apt" "$root/etc/dpkg" \
  "$root/var/lib/apt" "$root/var/cache/apt" "$root/var/log/apt" "$root/etc/resolv.conf" \
  "$root/etc/hostname"
