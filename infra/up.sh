#!/usr/bin/env bash
# Starts Drael on this machine: installs and starts what is missing (infra/provision.sh), builds,
# runs the pre-start steps (migrations, images), then starts every app as its own process and
# waits until the gateway's /readyz says it can serve, then names any backend that is down (degraded).
# Config: apps/<app>/.env if present, else apps/<app>/.env.example. GATEWAY_PORT=NNNN overrides
# the gateway's port. Logs: .drael/logs/<app>.log. Stop with: bash infra/down.sh
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

bash infra/down.sh || true
mkdir -p .drael/logs .drael/run
APPS=(sandbox search fetch billing agent-run gateway)
envfile_of() { if [ -f "apps/$1/.env" ]; then echo "apps/$1/.env"; else echo "apps/$1/.env.example"; fi; }

port=${GATEWAY_PORT:-$(grep -E '^PORT=' "$(envfile_of gateway)" | tail -1 | cut -d= -f2 | tr -d "'\"")}
port=${port:-8080}
if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
  echo "up: port $port is already taken by another process; set GATEWAY_PORT=<free port>" >&2
  exit 1
fi

for app in "${APPS[@]}"; do
  envfile=$(envfile_of "$app")
  (
    set -a; source "$envfile"; set +a
    if [ "$app" = gateway ]; then export PORT="$port"; fi
    cd "apps/$app"
    nohup node dist/main.js >"../../.drael/logs/$app.log" 2>&1 </dev/null &
    echo $! >"../../.drael/run/$app.pid"
  )
  echo "up: started $app (pid $(cat ".drael/run/$app.pid"), config $envfile, log .drael/logs/$app.log)"
done

# Services boot in parallel; Chromium and the Docker checks make the slowest take a while.
for _ in $(seq 1 360); do
  if curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then
    echo "Drael is up: gateway listening on http://127.0.0.1:$port (OpenAI base URL http://127.0.0.1:$port/v1)"
    # Ready means NATS and key verification; a backend still starting (Chromium, Docker) is listed here.
    curl -fsS "http://127.0.0.1:$port/readyz" | grep -o '"degraded":\[[^]]*\]' | grep -v '\[\]' | sed 's/^/up: degraded backends (their tools are not served yet): /' || true
    echo "Console: http://127.0.0.1:$port/console/ (sign in with an API key, or DRAEL_ADMIN_TOKEN for the operator views)"
    echo "Stop with: bash infra/down.sh"
    exit 0
  fi
  for app in "${APPS[@]}"; do
    if ! kill -0 "$(cat ".drael/run/$app.pid")" 2>/dev/null; then
      echo "up: $app exited during boot; last lines of .drael/logs/$app.log:" >&2
      tail -n 20 ".drael/logs/$app.log" >&2
      bash infra/down.sh >/dev/null 2>&1 || true
      exit 1
    fi
  done
  sleep 0.5
done
echo "up: the gateway is not ready after 180 s; see .drael/logs/ and http://127.0.0.1:$port/readyz" >&2
curl -sS "http://127.0.0.1:$port/readyz" >&2 || true
exit 1
