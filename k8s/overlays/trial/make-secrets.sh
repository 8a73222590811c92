#!/usr/bin/env bash
# Creates the Secrets of the TRIAL overlay with fresh random values (idempotent: existing
# Secrets are kept). Production creates the same Secrets from its own vault (k8s/README.md).
# Usage: DRAEL_MODELS='{"alias":{"base_url":"http://...:8000/v1","model":"..."}}' bash k8s/overlays/trial/make-secrets.sh
set -euo pipefail
ns=drael
kubectl get namespace "$ns" >/dev/null 2>&1 || kubectl create namespace "$ns"
make() { # make NAME KEY=VALUE...
  local name=$1; shift
  if kubectl -n "$ns" get secret "$name" >/dev/null 2>&1; then echo "secret $name exists, kept"; return; fi
  local args=(); for kv in "$@"; do args+=(--from-literal="$kv"); done
  kubectl -n "$ns" create secret generic "$name" "${args[@]}"
}
pg=$(openssl rand -hex 24)
make drael-postgres "POSTGRES_PASSWORD=$pg"
# The trial uses one role for the apps and for migrations; production gives migrations their own.
pg_password=$(kubectl -n "$ns" get secret drael-postgres -o jsonpath='{.data.POSTGRES_PASSWORD}' | base64 -d)
base="postgresql://postgres:${pg_password}@postgres:5432/drael"
make drael-database "BILLING_DATABASE_URL=$base?schema=billing" "AGENT_RUN_DATABASE_URL=$base?schema=agent_run"
make drael-migrate "BILLING_MIGRATE_DATABASE_URL=$base?schema=billing" "AGENT_RUN_MIGRATE_DATABASE_URL=$base?schema=agent_run"
make drael-redis "CACHE_REDIS_URL=redis://redis:6379" "QUEUE_REDIS_URL=redis://redis:6379"
make drael-models "DRAEL_MODELS=${DRAEL_MODELS:-{\}}"
make drael-agent-run-keys "AGENT_RUN_DATA_KEYS=k1:$(openssl rand -base64 32)" "AGENT_RUN_DATA_KEY_ACTIVE=k1"
make drael-billing-keys "BILLING_RECEIPT_KEY=$(openssl rand -hex 32)" "BILLING_RECEIPT_KEY_ID=k1"
make drael-searxng "SEARXNG_SECRET=$(openssl rand -hex 32)"
