#!/usr/bin/env bash
# Applies every app's Prisma migrations (apps/*/prisma/migrations) before the apps start, with
# packages/db-migrate (Prisma's schema engine as wasm; the native engine cannot be downloaded).
# Each app's DATABASE_URL comes from its .env (or .env.example), with ?schema= naming its own schema.
set -euo pipefail
cd "$(dirname "$0")/../.."
for dir in apps/*/prisma/migrations; do
  [ -d "$dir" ] || continue
  app_dir="${dir%/prisma/migrations}"
  app="$(basename "$app_dir")"
  envfile="$app_dir/.env"; [ -f "$envfile" ] || envfile="$app_dir/.env.example"
  url="$(grep -E '^DATABASE_URL=' "$envfile" 2>/dev/null | tail -1 | cut -d= -f2- || true)"
  url="${DATABASE_URL_OVERRIDE:-$url}"
  if [ -z "$url" ]; then echo "migrate: $app has migrations but no DATABASE_URL in $envfile" >&2; exit 1; fi
  echo "migrate: $app"
  (cd "$app_dir" && DATABASE_URL="$url" node ../../packages/db-migrate/dist/cli.js deploy)
done
