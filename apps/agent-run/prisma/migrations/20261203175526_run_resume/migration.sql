-- AlterTable
ALTER TABLE "runs" ADD COLUMN     "resumes" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "steps" ADD COLUMN     "message" TEXT;
