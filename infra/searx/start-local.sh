#!/usr/bin/env bash
# Starts the local/CI search stack on 127.0.0.1 unless it already answers:
#   - the fixture corpora server (infra/searx/fixture-server) on $DRAEL_SEARX_FIXTURE_PORT (8891)
#   - searx (Debian's package) with infra/searx/settings.local.yml on $DRAEL_SEARX_PORT (8890)
# Idempotent and fast when both are up. Runtime files: <repo>/.drael/searx/ (rendered settings,
# logs, pids). Used by infra/provision.d/40-searx.sh and by apps/search's test setup.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
searx_port="${DRAEL_SEARX_PORT:-8890}"
fixture_port="${DRAEL_SEARX_FIXTURE_PORT:-8891}"
run="$repo/.drael/searx"
mkdir -p "$run"

answers() { curl -fsS -m 2 -o /dev/null "$1" 2>/dev/null; }

if ! answers "http://127.0.0.1:$fixture_port/healthz"; then
  FIXTURE_PORT="$fixture_port" nohup node "$here/fixture-server/server.mjs" >"$run/fixture.log" 2>&1 &
  echo $! >"$run/fixture.pid"
  for _ in $(seq 1 50); do answers "http://127.0.0.1:$fixture_port/healthz" && break; sleep 0.1; done
  answers "http://127.0.0.1:$fixture_port/healthz" || { echo "searx fixture server did not start; see $run/fixture.log" >&2; exit 1; }
fi

if ! answers "http://127.0.0.1:$searx_port/config"; then
  secret_file="$run/secret"
  [ -s "$secret_file" ] || head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$secret_file"
  sed -e "s|@SEARX_PORT@|$searx_port|" \
      -e "s|@FIXTURE_URL@|http://127.0.0.1:$fixture_port|" \
      -e "s|@ENGINE@|$here/engines/drael_fixture|" \
      -e "s|@SECRET@|$(cat "$secret_file")|" \
      "$here/settings.local.yml" >"$run/settings.yml"
  SEARX_SETTINGS_PATH="$run/settings.yml" nohup searx-run >"$run/searx.log" 2>&1 &
  echo $! >"$run/searx.pid"
  for _ in $(seq 1 150); do answers "http://127.0.0.1:$searx_port/config" && break; sleep 0.2; done
  answers "http://127.0.0.1:$searx_port/config" || { echo "searx did not start; see $run/searx.log" >&2; tail -20 "$run/searx.log" >&2; exit 1; }
fi
echo "searx on http://127.0.0.1:$searx_port (fixture corpora on http://127.0.0.1:$fixture_port)"
