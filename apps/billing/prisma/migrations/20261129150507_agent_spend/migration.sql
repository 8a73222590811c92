-- AlterTable
ALTER TABLE "accounts" ADD COLUMN     "agent_steps_per_minute" INTEGER NOT NULL DEFAULT 120,
ADD COLUMN     "balance_micros" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "held_micros" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "monthly_budget_micros" BIGINT;

-- CreateTable
CREATE TABLE "monthly_spend" (
    "account_id" UUID NOT NULL,
    "month" DATE NOT NULL,
    "budget_micros" BIGINT,
    "spent_micros" BIGINT NOT NULL DEFAULT 0,
    "held_micros" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "monthly_spend_pkey" PRIMARY KEY ("account_id","month")
);

-- CreateTable
CREATE TABLE "spend_holds" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "amount_micros" BIGINT NOT NULL,
    "month" DATE NOT NULL,
    "status" "HoldStatus" NOT NULL DEFAULT 'held',
    "settled_micros" BIGINT,
    "receipt_sequence" INTEGER,
    "receipt_hash" CHAR(64),
    "receipt" JSONB,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "resolved_at" TIMESTAMPTZ(3),

    CONSTRAINT "spend_holds_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "spend_holds_status_expires_at_idx" ON "spend_holds"("status", "expires_at");

-- CreateIndex
CREATE INDEX "spend_holds_account_id_created_at_idx" ON "spend_holds"("account_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "spend_holds_account_id_idempotency_key_key" ON "spend_holds"("account_id", "idempotency_key");

-- AddForeignKey
ALTER TABLE "monthly_spend" ADD CONSTRAINT "monthly_spend_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "spend_holds" ADD CONSTRAINT "spend_holds_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- ---------------------------------------------------------------------------------------------
-- Written by hand (Prisma does not model these). Agent steps' money, kept by the database itself:
-- no race or retry can spend past the balance or the month's budget, or resolve a spend hold twice.
-- ---------------------------------------------------------------------------------------------

ALTER TABLE "accounts" ADD CONSTRAINT "accounts_wallet_within"
  CHECK ("balance_micros" >= 0 AND "held_micros" >= 0 AND "held_micros" <= "balance_micros"
     AND ("monthly_budget_micros" IS NULL OR "monthly_budget_micros" >= 0) AND "agent_steps_per_minute" > 0);
ALTER TABLE "monthly_spend" ADD CONSTRAINT "monthly_spend_within"
  CHECK ("spent_micros" >= 0 AND "held_micros" >= 0
     AND ("budget_micros" IS NULL OR "spent_micros" + "held_micros" <= "budget_micros"));
ALTER TABLE "spend_holds" ADD CONSTRAINT "spend_holds_kind" CHECK ("kind" IN ('inference.chat', 'sandbox.execute'));
ALTER TABLE "spend_holds" ADD CONSTRAINT "spend_holds_resolution"
  CHECK ("amount_micros" >= 0
     AND ("status" = 'held') = ("resolved_at" IS NULL)
     AND ("status" = 'settled') = ("settled_micros" IS NOT NULL)
     AND ("settled_micros" IS NULL OR ("settled_micros" >= 0 AND "settled_micros" <= "amount_micros"))
     AND ("receipt_sequence" IS NULL) = ("receipt_hash" IS NULL)
     AND ("receipt_sequence" IS NULL OR ("status" = 'settled' AND "receipt_sequence" >= 0 AND "receipt" IS NOT NULL)));
-- Billing issues at most one receipt per place in a run's chain.
CREATE UNIQUE INDEX "spend_holds_run_receipt_sequence" ON "spend_holds"("account_id", "run_id", "receipt_sequence")
  WHERE "receipt_sequence" IS NOT NULL;

-- A resolved spend hold never changes again.
CREATE TRIGGER "spend_holds_resolve_once" BEFORE UPDATE ON "spend_holds" FOR EACH ROW EXECUTE FUNCTION "billing_hold_immutable"();

-- spend_reserve: one agent operation's maximum cost, held against the balance and the month's
-- budget, after the account's per-minute step limit. One round trip; the account row's lock
-- (NO KEY UPDATE: it does not block the FK checks of the unit holds) serialises one account's
-- reservations. Outcomes: created | existing | conflict | account_not_found | rate_limited |
-- insufficient_balance | monthly_budget_reached.
CREATE FUNCTION "spend_reserve"(p_id uuid, p_account uuid, p_key text, p_run text, p_kind text, p_amount bigint,
                                p_now timestamptz, p_ttl_s int)
RETURNS TABLE(outcome text, retry_after_ms int, id uuid, run_id text, kind text, amount_micros bigint, status text,
              settled_micros bigint, expires_at timestamptz)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
DECLARE
  v_month date := date_trunc('month', p_now AT TIME ZONE 'UTC')::date;
  a "accounts"%ROWTYPE;
  h "spend_holds"%ROWTYPE;
  v_recent int;
  v_oldest timestamptz;
BEGIN
  SELECT * INTO a FROM "accounts" x WHERE x."id" = p_account FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'account_not_found', NULL::int, NULL::uuid, NULL::text, NULL::text, NULL::bigint, NULL::text, NULL::bigint, NULL::timestamptz;
    RETURN;
  END IF;
  SELECT * INTO h FROM "spend_holds" x WHERE x."account_id" = p_account AND x."idempotency_key" = p_key;
  IF FOUND THEN
    RETURN QUERY SELECT CASE WHEN h."run_id" = p_run AND h."kind" = p_kind AND h."amount_micros" = p_amount THEN 'existing' ELSE 'conflict' END,
      NULL::int, h."id", h."run_id", h."kind", h."amount_micros", h."status"::text, h."settled_micros", h."expires_at";
    RETURN;
  END IF;
  -- The account's agent step rate: operations started in the last minute (whatever became of them).
  SELECT count(*), min(x."created_at") INTO v_recent, v_oldest FROM "spend_holds" x
    WHERE x."account_id" = p_account AND x."created_at" > p_now - interval '1 minute';
  IF v_recent >= a."agent_steps_per_minute" THEN
    RETURN QUERY SELECT 'rate_limited', GREATEST(1, ceil(extract(epoch FROM (v_oldest + interval '1 minute' - p_now)) * 1000))::int,
      NULL::uuid, NULL::text, NULL::text, NULL::bigint, NULL::text, NULL::bigint, NULL::timestamptz;
    RETURN;
  END IF;
  IF a."balance_micros" - a."held_micros" < p_amount THEN
    RETURN QUERY SELECT 'insufficient_balance', NULL::int, NULL::uuid, NULL::text, NULL::text, NULL::bigint, NULL::text, NULL::bigint, NULL::timestamptz;
    RETURN;
  END IF;
  INSERT INTO "monthly_spend" ("account_id", "month", "budget_micros") VALUES (p_account, v_month, a."monthly_budget_micros")
    ON CONFLICT DO NOTHING;
  UPDATE "monthly_spend" m SET "held_micros" = m."held_micros" + p_amount
    WHERE m."account_id" = p_account AND m."month" = v_month
      AND (m."budget_micros" IS NULL OR m."spent_micros" + m."held_micros" + p_amount <= m."budget_micros");
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'monthly_budget_reached', NULL::int, NULL::uuid, NULL::text, NULL::text, NULL::bigint, NULL::text, NULL::bigint, NULL::timestamptz;
    RETURN;
  END IF;
  -- The CHECK (held <= balance) stands under this even if the test above were wrong.
  UPDATE "accounts" x SET "held_micros" = x."held_micros" + p_amount WHERE x."id" = p_account;
  INSERT INTO "spend_holds" ("id", "account_id", "idempotency_key", "run_id", "kind", "amount_micros", "month", "status", "expires_at", "created_at")
    VALUES (p_id, p_account, p_key, p_run, p_kind, p_amount, v_month, 'held', p_now + make_interval(secs => p_ttl_s), p_now)
    RETURNING * INTO h;
  RETURN QUERY SELECT 'created', NULL::int, h."id", h."run_id", h."kind", h."amount_micros", h."status"::text, h."settled_micros", h."expires_at";
END $fn$;

-- spend_resolve: settles (with the actual cost, capped at the hold, and the receipt billing signed
-- for it), releases or expires a spend hold; the conditional UPDATE lets exactly one resolution win.
-- A receipt must extend the run's chain as billing issued it: sequence 0 links to nothing, sequence
-- n to the hash of the receipt billing issued at n-1. Outcomes: resolved | resolved_before |
-- not_found | chain_mismatch.
CREATE FUNCTION "spend_resolve"(p_id uuid, p_account uuid, p_status "HoldStatus", p_amount bigint, p_now timestamptz,
                                p_sequence int, p_previous text, p_hash text, p_receipt jsonb)
RETURNS TABLE(outcome text, id uuid, run_id text, kind text, amount_micros bigint, status text, settled_micros bigint,
              expires_at timestamptz, receipt jsonb)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
DECLARE
  h "spend_holds"%ROWTYPE;
  v_settled bigint;
  v_previous text;
BEGIN
  IF p_sequence IS NOT NULL THEN
    SELECT * INTO h FROM "spend_holds" x WHERE x."id" = p_id AND x."account_id" = p_account;
    IF FOUND AND h."status" = 'held' THEN
      IF p_sequence = 0 THEN
        v_previous := NULL;
      ELSE
        SELECT x."receipt_hash" INTO v_previous FROM "spend_holds" x
          WHERE x."account_id" = p_account AND x."run_id" = h."run_id" AND x."receipt_sequence" = p_sequence - 1;
        IF NOT FOUND THEN v_previous := 'none'; END IF;
      END IF;
      IF v_previous IS DISTINCT FROM p_previous OR EXISTS (SELECT 1 FROM "spend_holds" x
          WHERE x."account_id" = p_account AND x."run_id" = h."run_id" AND x."receipt_sequence" = p_sequence) THEN
        RETURN QUERY SELECT 'chain_mismatch', h."id", h."run_id", h."kind", h."amount_micros", h."status"::text, h."settled_micros", h."expires_at", h."receipt";
        RETURN;
      END IF;
    END IF;
  END IF;
  UPDATE "spend_holds" x SET "status" = p_status, "resolved_at" = p_now,
      "settled_micros" = CASE WHEN p_status = 'settled' THEN LEAST(GREATEST(p_amount, 0), x."amount_micros") END,
      "receipt_sequence" = CASE WHEN p_status = 'settled' THEN p_sequence END,
      "receipt_hash" = CASE WHEN p_status = 'settled' THEN p_hash END,
      "receipt" = CASE WHEN p_status = 'settled' THEN p_receipt END
    WHERE x."id" = p_id AND x."account_id" = p_account AND x."status" = 'held'
    RETURNING * INTO h;
  IF NOT FOUND THEN
    SELECT * INTO h FROM "spend_holds" x WHERE x."id" = p_id AND x."account_id" = p_account;
    IF NOT FOUND THEN
      RETURN QUERY SELECT 'not_found', NULL::uuid, NULL::text, NULL::text, NULL::bigint, NULL::text, NULL::bigint, NULL::timestamptz, NULL::jsonb;
      RETURN;
    END IF;
    RETURN QUERY SELECT 'resolved_before', h."id", h."run_id", h."kind", h."amount_micros", h."status"::text, h."settled_micros", h."expires_at", h."receipt";
    RETURN;
  END IF;
  v_settled := COALESCE(h."settled_micros", 0);
  UPDATE "monthly_spend" m SET "held_micros" = m."held_micros" - h."amount_micros", "spent_micros" = m."spent_micros" + v_settled
    WHERE m."account_id" = p_account AND m."month" = h."month";
  UPDATE "accounts" a SET "held_micros" = a."held_micros" - h."amount_micros", "balance_micros" = a."balance_micros" - v_settled
    WHERE a."id" = p_account;
  RETURN QUERY SELECT 'resolved', h."id", h."run_id", h."kind", h."amount_micros", h."status"::text, h."settled_micros", h."expires_at", h."receipt";
END $fn$;
