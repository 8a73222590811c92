-- CreateTable
CREATE TABLE "wallet_credits" (
    "account_id" UUID NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "amount_micros" BIGINT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "wallet_credits_pkey" PRIMARY KEY ("account_id","idempotency_key")
);

-- AddForeignKey
ALTER TABLE "wallet_credits" ADD CONSTRAINT "wallet_credits_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
