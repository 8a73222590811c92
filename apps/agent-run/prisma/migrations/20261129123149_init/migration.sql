-- CreateEnum
CREATE TYPE "RunStatus" AS ENUM ('queued', 'running', 'succeeded', 'failed', 'budget_exceeded', 'step_limit_reached', 'timed_out', 'cancelled');

-- CreateTable
CREATE TABLE "agents" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "instructions" TEXT NOT NULL,
    "tools" TEXT[],
    "step_limit" INTEGER NOT NULL,
    "budget_micros" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deleted_at" TIMESTAMPTZ(3),

    CONSTRAINT "agents_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "runs" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "agent_id" TEXT NOT NULL,
    "status" "RunStatus" NOT NULL DEFAULT 'queued',
    "model" TEXT NOT NULL,
    "tools" TEXT[],
    "step_limit" INTEGER NOT NULL,
    "task" TEXT NOT NULL,
    "output" TEXT,
    "error_code" TEXT,
    "error_message" TEXT,
    "budget_micros" INTEGER NOT NULL,
    "spent_micros" INTEGER NOT NULL DEFAULT 0,
    "step_count" INTEGER NOT NULL DEFAULT 0,
    "model_calls" INTEGER NOT NULL DEFAULT 0,
    "receipt_count" INTEGER NOT NULL DEFAULT 0,
    "receipt_head" TEXT NOT NULL DEFAULT '0000000000000000000000000000000000000000000000000000000000000000',
    "run_end" JSONB,
    "salt" BYTEA NOT NULL,
    "claim_token" TEXT,
    "lease_until" TIMESTAMPTZ(3),
    "cancel_requested" BOOLEAN NOT NULL DEFAULT false,
    "idempotency_key" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "steps" (
    "run_id" TEXT NOT NULL,
    "sequence" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "cost_micros" INTEGER NOT NULL,
    "detail" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "steps_pkey" PRIMARY KEY ("run_id","sequence")
);

-- CreateTable
CREATE TABLE "receipts" (
    "run_id" TEXT NOT NULL,
    "sequence" INTEGER NOT NULL,
    "hash" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "key_id" TEXT NOT NULL,
    "signature" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "receipts_pkey" PRIMARY KEY ("run_id","sequence")
);

-- CreateIndex
CREATE INDEX "agents_account_id_created_at_idx" ON "agents"("account_id", "created_at" DESC);

-- CreateIndex
CREATE INDEX "runs_account_id_created_at_idx" ON "runs"("account_id", "created_at" DESC);

-- CreateIndex
CREATE INDEX "runs_status_lease_until_idx" ON "runs"("status", "lease_until");

-- CreateIndex
CREATE UNIQUE INDEX "runs_account_id_idempotency_key_key" ON "runs"("account_id", "idempotency_key");

-- AddForeignKey
ALTER TABLE "runs" ADD CONSTRAINT "runs_agent_id_fkey" FOREIGN KEY ("agent_id") REFERENCES "agents"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "steps" ADD CONSTRAINT "steps_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "receipts" ADD CONSTRAINT "receipts_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Hand-written invariants (Prisma does not model CHECK constraints).
-- Spend never above the budget (spec 03: not even by one turn).
ALTER TABLE "runs" ADD CONSTRAINT "runs_spend_within_budget" CHECK ("spent_micros" >= 0 AND "spent_micros" <= "budget_micros");
-- A running run always has a claim; a run that is not running has none.
ALTER TABLE "runs" ADD CONSTRAINT "runs_claim_matches_status" CHECK (("status" = 'running') = ("claim_token" IS NOT NULL));
-- An agent's limits are positive.
ALTER TABLE "agents" ADD CONSTRAINT "agents_limits_positive" CHECK ("step_limit" > 0 AND "budget_micros" > 0);
