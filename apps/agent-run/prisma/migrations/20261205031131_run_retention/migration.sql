-- Retention (AGENT_RUN_RETENTION_DAYS) removes the runs that ended longest ago first. A plain
-- CREATE INDEX: writes to "runs" wait while it builds (seconds for a million runs).
-- CreateIndex
CREATE INDEX "runs_finished_at_idx" ON "runs"("finished_at");
