#!/usr/bin/env bash
# Stops the apps infra/up.sh started: SIGTERM (each drains its work in flight, then exits 0),
# waits up to 60 s, then SIGKILL for whatever is still running.
cd "$(dirname "$0")/.."
pids=()
for pidfile in .drael/run/*.pid; do
  [ -e "$pidfile" ] || continue
  pid=$(cat "$pidfile")
  if kill -TERM "$pid" 2>/dev/null; then
    echo "stopping $(basename "$pidfile" .pid) ($pid)"
    pids+=("$pid")
  fi
  rm -f "$pidfile"
done
for _ in $(seq 1 120); do
  alive=()
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive+=("$pid"); done
  [ ${#alive[@]} -eq 0 ] && exit 0
  sleep 0.5
done
echo "down: still running after 60 s, killing: ${alive[*]}" >&2
kill -KILL "${alive[@]}" 2>/dev/null || true
