-- AlterTable
ALTER TABLE "runs" ADD COLUMN     "traceparent" TEXT;
