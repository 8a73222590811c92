#!/usr/bin/env bash
# Local bring-up only: agent-run needs a data key (receipts are signed by billing: 16-billing-receipt-key.sh). When apps/agent-run/.env
# does not exist, write one from .env.example with fresh random keys (production passes its own).
set -euo pipefail
cd "$(dirname "$0")/../.."
envfile=apps/agent-run/.env
[ -f "$envfile" ] && exit 0
sed -e "s|^AGENT_RUN_DATA_KEYS=.*|AGENT_RUN_DATA_KEYS=k1:$(openssl rand -base64 32)|" \
    -e "s|^AGENT_RUN_DATA_KEY_ACTIVE=.*|AGENT_RUN_DATA_KEY_ACTIVE=k1|" \
    apps/agent-run/.env.example >"$envfile"
echo "agent-run: wrote $envfile with a new data key"
