-- THE definition of spend_reserve: edit here, then write the migration that applies it
-- (pnpm --filter @drael/billing sql:migration <name>; docs/recipes/add-a-migration.md).
-- test/sql-functions.spec.ts fails while the newest migration's copy differs from this file.
--
-- spend_reserve: one agent operation's maximum cost, held against the balance and the month's
-- budget, after the account's per-minute step limit. One round trip; the account row's lock
-- (NO KEY UPDATE: it does not block the FK checks of the unit holds) serialises one account's
-- reservations. Outcomes: created | existing | conflict | account_not_found | rate_limited |
-- insufficient_balance | monthly_budget_reached.
-- The rate check is bounded by the limit (20261129153000). It locks the account row, then the
-- month: the order every spend function follows (20261129154000).
CREATE OR REPLACE FUNCTION "spend_reserve"(p_id uuid, p_account uuid, p_key text, p_run text, p_kind text, p_amount bigint,
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
  -- The account's agent step rate: operations started in the last minute (whatever became of
  -- them), read newest first and no further than the limit.
  SELECT count(*), min(r."created_at") INTO v_recent, v_oldest FROM (
    SELECT x."created_at" FROM "spend_holds" x
     WHERE x."account_id" = p_account AND x."created_at" > p_now - interval '1 minute'
     ORDER BY x."created_at" DESC LIMIT a."agent_steps_per_minute") r;
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
