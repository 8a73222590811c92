#!/usr/bin/env bash
# Installs and starts what Drael needs on a Debian/Ubuntu machine, skipping whatever is already
# there and running. Idempotent: safe to run before every bring-up and every CI run.
# Each part lives in infra/provision.d/NN-name.sh and is run in order.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export DEBIAN_FRONTEND=noninteractive

if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then exec sudo -E bash "$0" "$@"; fi
  echo "provision: run as root (or with sudo)" >&2; exit 1
fi

apt_updated=0
# apt_install PKG... : installs the Debian packages that are missing, one apt run for all of them.
apt_install() {
  local missing=()
  for p in "$@"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$apt_updated" -eq 0 ]; then apt-get update -qq; apt_updated=1; fi
  echo "provision: installing ${missing[*]}"
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
export -f apt_install
export apt_updated

for part in "$here"/provision.d/*.sh; do
  echo "provision: $(basename "$part")"
  # shellcheck source=/dev/null
  source "$part"
done
echo "provision: done"
