-- CreateTable
CREATE TABLE "wallet_credits" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "amount_micros" BIGINT NOT NULL,
    "idempotency_key" TEXT,
    "request_hash" CHAR(64),
    "response" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "wallet_credits_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "wallet_credits_account_id_idempotency_key_key" ON "wallet_credits"("account_id", "idempotency_key");

-- AddForeignKey
ALTER TABLE "wallet_credits" ADD CONSTRAINT "wallet_credits_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
