-- AlterTable
ALTER TABLE "runs" ADD COLUMN     "pending_step" JSONB;
