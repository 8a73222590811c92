#!/bin/sh
# Prisma's native schema engine cannot be downloaded on these machines; generate/validate/format only
# need this path to exist. Migrations run on the wasm engine instead.
echo "Use: pnpm --filter @drael/billing migrate:deploy | migrate:create NAME | migrate:check (packages/db-migrate)" >&2
exit 1
