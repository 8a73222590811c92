-- DropIndex
DROP INDEX "agents_account_id_created_at_idx";

-- DropIndex
DROP INDEX "runs_account_id_created_at_idx";

-- AlterTable
ALTER TABLE "runs" ADD COLUMN     "event_seq" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "idempotency_hash" CHAR(64);

-- CreateTable
CREATE TABLE "run_events" (
    "run_id" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "run_events_pkey" PRIMARY KEY ("run_id","seq")
);

-- CreateIndex
CREATE INDEX "agents_account_id_created_at_id_idx" ON "agents"("account_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "runs_account_id_created_at_id_idx" ON "runs"("account_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "runs_account_id_agent_id_created_at_id_idx" ON "runs"("account_id", "agent_id", "created_at" DESC, "id" DESC);

-- AddForeignKey
ALTER TABLE "run_events" ADD CONSTRAINT "run_events_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
