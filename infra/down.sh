#!/usr/bin/env bash
# Stops the apps infra/up.sh started (SIGTERM: each drains, then exits).
cd "$(dirname "$0")/.."
for pidfile in .drael/run/*.pid; do
  [ -e "$pidfile" ] || continue
  pid=$(cat "$pidfile")
  kill -TERM "$pid" 2>/dev/null && echo "stopping $(basename "$pidfile" .pid) ($pid)"
  rm -f "$pidfile"
done
