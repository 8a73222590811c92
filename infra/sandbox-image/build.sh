#!/usr/bin/env bash
# Builds the sandbox image offline: debootstrap (Debian's own repositories, the only ones
# reachable) -> strip setuid/setgid bits -> `docker import`. No registry is needed.
# The image carries the hash of this recipe as a label; when an image with the same hash is
# already there, nothing is done, so bring-up and CI can call this every time.
#   usage: bash infra/sandbox-image/build.sh [IMAGE]      (default drael-sandbox:latest)
#   env:   DRAEL_DEBIAN_MIRROR (debootstrap's default when unset), DRAEL_SANDBOX_REBUILD=1 forces a build
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
image="${1:-drael-sandbox:latest}"

recipe_hash="$(cat "$here/build.sh" "$here/packages.txt" | sha256sum | cut -c1-16)"
current="$(docker image inspect -f '{{ index .Config.Labels "drael.recipe" }}' "$image" 2>/dev/null || true)"
if [ "$current" = "$recipe_hash" ] && [ "${DRAEL_SANDBOX_REBUILD:-0}" != 1 ]; then
  echo "sandbox-image: $image is up to date (recipe $recipe_hash)"
  exit 0
fi

command -v debootstrap >/dev/null || { echo "sandbox-image: debootstrap is missing (apt-get install debootstrap)" >&2; exit 1; }
work="$(mktemp -d /var/tmp/drael-sandbox-image.XXXXXX)"
trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"
packages="$(grep -v -E '^\s*(#|$)' "$here/packages.txt" | paste -sd, -)"

echo "sandbox-image: building $image (recipe $recipe_hash) with $packages"
# shellcheck disable=SC2086
debootstrap --variant=minbase --include="$packages" bookworm "$rootfs" ${DRAEL_DEBIAN_MIRROR:-} >"$work/debootstrap.log" 2>&1 || {
  tail -n 30 "$work/debootstrap.log" >&2; exit 1; }

# Keep it small: nothing in the sandbox needs apt's lists and caches, docs or locales.
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/* "$rootfs"/var/cache/debconf/*-old \
  "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/var/log/* \
  "$rootfs"/usr/share/locale/*
# No setuid/setgid program may exist: a sandboxed program must not be able to gain privileges
# even if no-new-privileges were ever lost.
find "$rootfs" -xdev -type f -perm /6000 -exec chmod ug-s {} +
# Mount points the service binds (workspace) or mounts (tmpfs), owned by the sandbox user.
mkdir -p "$rootfs/work" "$rootfs/tmp"
chmod 1777 "$rootfs/tmp"
chown 65534:65534 "$rootfs/work"
# The container must not learn the host's resolver or name from the build machine.
: >"$rootfs/etc/resolv.conf"
echo sandbox >"$rootfs/etc/hostname"

tar --numeric-owner -C "$rootfs" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'WORKDIR /work' \
  --change 'USER 65534:65534' \
  --change "LABEL drael.recipe=$recipe_hash" \
  --change 'LABEL drael.role=sandbox-image' \
  - "$image" >/dev/null
echo "sandbox-image: built $image ($(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1/1e6}'))"
