-- CreateIndex
CREATE INDEX "runs_account_id_status_idx" ON "runs"("account_id", "status");
