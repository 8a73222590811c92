#!/usr/bin/env bash
# Builds the app images (infra/docker/Dockerfile) into this machine's Docker engine.
#   usage: bash infra/docker/build-images.sh [--standin] [IMAGE...]
#   IMAGE: gateway sandbox search fetch billing agent-run (the apps, the default), tor (fetch's
#   and SearXNG's sidecar, infra/tor) and sandbox-run (the run image, infra/sandbox-image).
#   --standin   no registry reachable (these machines): build FROM a local stand-in for the pinned
#               Debian base instead of pulling it. The stand-in is made the way Debian's official
#               images are (debootstrap --variant=minbase bookworm), from Debian's own repositories,
#               and only when its recipe changed (label drael.recipe), like infra/sandbox-image.
#   env: DRAEL_IMAGE_TAG (0.1.0, the manifests' tag), DRAEL_IMAGE_PREFIX (drael/),
#        DRAEL_DEBIAN_MIRROR (debootstrap's default when unset),
#        DRAEL_BUILD_CPUSET (e.g. 1: the build's containers use only that CPU; a `nice` on this
#        script does not reach them, they are the engine's children),
#        DRAEL_BUILD_NETWORK (e.g. host, when the engine's bridge cannot reach the npm registry).
# The build needs the npm registry (pnpm install, and Node and pnpm as npm packages) and, for fetch
# and sandbox, Debian's repositories. Prints each image's build time and size.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
tag="${DRAEL_IMAGE_TAG:-0.1.0}"
prefix="${DRAEL_IMAGE_PREFIX:-drael/}"
standin=0
apps=()
for a in "$@"; do
  case "$a" in
    --standin) standin=1 ;;
    gateway | sandbox | search | fetch | billing | agent-run | tor | sandbox-run) apps+=("$a") ;;
    *) echo "build-images: unknown argument $a (images: gateway sandbox search fetch billing agent-run tor sandbox-run)" >&2; exit 2 ;;
  esac
done
[ ${#apps[@]} -gt 0 ] || apps=(gateway sandbox search fetch billing agent-run)

build_args=()
if [ "$standin" = 1 ]; then
  base=drael-standin/debian:bookworm-slim
  shopt -s nullglob
  local_cas=(/usr/local/share/ca-certificates/*.crt)
  shopt -u nullglob
  recipe_hash="$( (sed -n '/^  build_standin() {/,/^  }$/p' "$0"; cat "${local_cas[@]}" /dev/null) | sha256sum | cut -c1-16)"
  build_standin() {
    command -v debootstrap >/dev/null || { echo "build-images: debootstrap is missing (apt-get install debootstrap)" >&2; return 1; }
    local work rootfs
    work="$(mktemp -d /var/tmp/drael-standin.XXXXXX)"
    rootfs="$work/rootfs"
    echo "build-images: building the stand-in base $base (recipe $recipe_hash)"
    # shellcheck disable=SC2086
    if ! debootstrap --variant=minbase bookworm "$rootfs" ${DRAEL_DEBIAN_MIRROR:-} >"$work/debootstrap.log" 2>&1; then
      tail -n 30 "$work/debootstrap.log" >&2
      rm -rf "$work"
      return 1
    fi
    # As in Debian's slim images: no apt lists or caches, docs, man pages or locales.
    rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb \
      "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/usr/share/locale/* "$rootfs"/var/log/*
    # Debian's official image's package sources (with the updates and security suites), where
    # debootstrap leaves only the release itself.
    rm -f "$rootfs/etc/apt/sources.list"
    mkdir -p "$rootfs/etc/apt/sources.list.d"
    printf '%s\n' 'Types: deb' 'URIs: http://deb.debian.org/debian' 'Suites: bookworm bookworm-updates' 'Components: main' \
      'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' '' 'Types: deb' 'URIs: http://deb.debian.org/debian-security' \
      'Suites: bookworm-security' 'Components: main' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' \
      >"$rootfs/etc/apt/sources.list.d/debian.sources"
    # The build machine's resolver and name stay out of the image (the engine provides its own).
    : >"$rootfs/etc/resolv.conf"
    : >"$rootfs/etc/hostname"
    # The build machine's own CAs (e.g. of a TLS-inspecting egress proxy, as on these machines),
    # so the build's downloads verify as they do on the machine: they join the image's trust store
    # when the recipe installs ca-certificates. The stand-in is for building and testing here,
    # never for shipping.
    mkdir -p "$rootfs/usr/local/share/ca-certificates"
    for ca in "${local_cas[@]}"; do cp "$ca" "$rootfs/usr/local/share/ca-certificates/"; done
    tar --numeric-owner -C "$rootfs" -c . | docker import \
      --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'CMD ["bash"]' \
      --change "LABEL drael.recipe=$recipe_hash" \
      --change 'LABEL drael.role=standin-base' \
      - "$base" >/dev/null
    rm -rf "$work"
  }
  current="$(docker image inspect -f '{{ index .Config.Labels "drael.recipe" }}' "$base" 2>/dev/null || true)"
  if [ "$current" != "$recipe_hash" ]; then
    started=$SECONDS
    build_standin
    echo "build-images: stand-in base built in $((SECONDS - started)) s"
  else
    echo "build-images: stand-in base $base is up to date (recipe $recipe_hash)"
  fi
  build_args+=(--build-arg "BASE_IMAGE=$base")
fi
[ -n "${DRAEL_BUILD_CPUSET:-}" ] && build_args+=(--cpuset-cpus "$DRAEL_BUILD_CPUSET")
[ -n "${DRAEL_BUILD_NETWORK:-}" ] && build_args+=(--network "$DRAEL_BUILD_NETWORK")

logs="$(mktemp -d /tmp/drael-build-images.XXXXXX)"
for app in "${apps[@]}"; do
  image="$prefix$app:$tag"
  started=$SECONDS
  case "$app" in
    tor) recipe=(-f "$repo/infra/tor/Dockerfile" "$repo") ;;
    sandbox-run) recipe=(-f "$repo/infra/sandbox-image/Dockerfile" "$repo/infra/sandbox-image") ;;
    *) recipe=(-f "$here/Dockerfile" --build-arg "APP=$app" "$repo") ;;
  esac
  # The legacy builder (DOCKER_BUILDKIT=0) takes --cpuset-cpus, and is what an engine without
  # the buildx plugin has anyway; the recipes need nothing of BuildKit.
  if ! DOCKER_BUILDKIT=0 docker build "${build_args[@]}" --label drael.role=app-image -t "$image" "${recipe[@]}" >"$logs/$app.log" 2>&1; then
    tail -n 40 "$logs/$app.log" >&2
    echo "build-images: $image failed (whole log: $logs/$app.log)" >&2
    exit 1
  fi
  size="$(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1/1e6}')"
  echo "build-images: $image built in $((SECONDS - started)) s, $size"
done
rm -rf "$logs"
