#!/bin/sh
# Prisma's native schema engine cannot be downloaded on these machines; generate/validate/format only
# need this path to exist. Migrations run on the wasm engine instead (packages/db-migrate).
echo "Use: pnpm --filter @drael/agent-run migrate:deploy | migrate:create NAME | migrate:check" >&2
exit 1
