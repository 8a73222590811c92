#!/usr/bin/env bash
# Local bring-up only: billing signs agent steps' receipts and run ends and needs an Ed25519 key for
# it. When apps/billing/.env does not exist, write one from .env.example with a fresh key
# (production passes its own, k8s: the drael-billing-keys secret).
set -euo pipefail
cd "$(dirname "$0")/../.."
envfile=apps/billing/.env
if [ -f "$envfile" ]; then
  grep -qE '^BILLING_RECEIPT_KEY=[0-9a-fA-F]{64}' "$envfile" || echo "billing: $envfile has no BILLING_RECEIPT_KEY; hosted agents cannot bill steps (openssl rand -hex 32)" >&2
  exit 0
fi
sed -e "s|^BILLING_RECEIPT_KEY=.*|BILLING_RECEIPT_KEY=$(openssl rand -hex 32)|" apps/billing/.env.example >"$envfile"
echo "billing: wrote $envfile with a new receipt signing key"
