#!/usr/bin/env bash
# Starts Drael on this machine: installs and starts what is missing (infra/provision.sh), builds,
# runs the pre-start steps (migrations, images), then starts every app as its own process.
# Logs: .drael/logs/<app>.log. Stop with: bash infra/down.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export TURBO_TELEMETRY_DISABLED=1

bash infra/provision.sh
pnpm install --frozen-lockfile
pnpm build

for step in infra/prestart.d/*.sh; do
  [ -e "$step" ] || continue
  echo "up: $(basename "$step")"
  bash "$step"
done

bash infra/down.sh >/dev/null 2>&1 || true
mkdir -p .drael/logs .drael/run
APPS=(sandbox search fetch billing agent-run gateway)
for app in "${APPS[@]}"; do
  envfile="apps/$app/.env"; [ -f "$envfile" ] || envfile="apps/$app/.env.example"
  (
    set -a; source "$envfile"; set +a
    cd "apps/$app"
    nohup node dist/main.js >"../../.drael/logs/$app.log" 2>&1 &
    echo $! >"../../.drael/run/$app.pid"
  )
done

port=$(grep -E '^PORT=' apps/gateway/.env 2>/dev/null | cut -d= -f2 || true)
port=${port:-$(grep -E '^PORT=' apps/gateway/.env.example | cut -d= -f2)}
port=${port:-8080}
for _ in $(seq 1 120); do
  if curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then
    echo "Drael is up: gateway listening on http://127.0.0.1:$port (OpenAI base URL http://127.0.0.1:$port/v1)"
    exit 0
  fi
  sleep 0.5
done
echo "up: the gateway is not ready after 60 s; see .drael/logs/ and http://127.0.0.1:$port/readyz" >&2
curl -sS "http://127.0.0.1:$port/readyz" >&2 || true
exit 1
