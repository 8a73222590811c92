-- Agent spend, tightened after measuring the billing hop of a step (bench/agent-run):
-- 1. settling a step is ONE round trip: spend_settle checks the hold (its run, kind and that the
--    cost is within it), the receipt's place in the run's chain, and settles, all in one call
--    (before, the service read the hold first to learn what to sign);
-- 2. spend_resolve only releases and expires now (its settle path moved to spend_settle);
-- 3. spend_reserve's rate check reads at most the account's per-minute limit of rows, and its
--    retry_after is when the oldest of those leaves the window (exactly when a slot frees).

DROP FUNCTION "spend_resolve"(uuid, uuid, "HoldStatus", bigint, timestamptz, int, text, text, jsonb);

-- spend_resolve: releases or expires a spend hold; the conditional UPDATE lets exactly one
-- resolution win. Outcomes: resolved | resolved_before | not_found.
CREATE FUNCTION "spend_resolve"(p_id uuid, p_account uuid, p_status "HoldStatus", p_now timestamptz)
RETURNS TABLE(outcome text, id uuid, run_id text, kind text, amount_micros bigint, status text, settled_micros bigint,
              expires_at timestamptz, receipt jsonb)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
DECLARE
  h "spend_holds"%ROWTYPE;
BEGIN
  IF p_status NOT IN ('released', 'expired') THEN
    RAISE EXCEPTION 'spend_resolve releases or expires; settle with spend_settle' USING ERRCODE = 'invalid_parameter_value';
  END IF;
  UPDATE "spend_holds" x SET "status" = p_status, "resolved_at" = p_now
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
  UPDATE "monthly_spend" m SET "held_micros" = m."held_micros" - h."amount_micros"
    WHERE m."account_id" = p_account AND m."month" = h."month";
  UPDATE "accounts" a SET "held_micros" = a."held_micros" - h."amount_micros" WHERE a."id" = p_account;
  RETURN QUERY SELECT 'resolved', h."id", h."run_id", h."kind", h."amount_micros", h."status"::text, h."settled_micros", h."expires_at", h."receipt";
END $fn$;

-- spend_settle: settles a step with its actual cost and the receipt billing signed for it. The
-- hold must be this account's, for this run and kind, and the cost within it; the receipt must
-- extend the run's chain as billing issued it (sequence 0 links to nothing, n to the hash issued
-- at n-1; one receipt per place, the unique index under it). Outcomes: resolved | resolved_before
-- (with the receipt stored the first time) | not_found | mismatch | over_reservation | chain_mismatch.
CREATE FUNCTION "spend_settle"(p_id uuid, p_account uuid, p_run text, p_kind text, p_amount bigint, p_now timestamptz,
                               p_sequence int, p_previous text, p_hash text, p_receipt jsonb)
RETURNS TABLE(outcome text, id uuid, run_id text, kind text, amount_micros bigint, status text, settled_micros bigint,
              expires_at timestamptz, receipt jsonb)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
DECLARE
  h "spend_holds"%ROWTYPE;
  v_previous text;
  v_outcome text;
BEGIN
  -- The row lock makes the checks below and the update one step against a racing settle or sweep.
  SELECT * INTO h FROM "spend_holds" x WHERE x."id" = p_id AND x."account_id" = p_account FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'not_found', NULL::uuid, NULL::text, NULL::text, NULL::bigint, NULL::text, NULL::bigint, NULL::timestamptz, NULL::jsonb;
    RETURN;
  END IF;
  IF h."status" <> 'held' THEN
    v_outcome := 'resolved_before';
  ELSIF h."run_id" <> p_run OR h."kind" <> p_kind THEN
    v_outcome := 'mismatch';
  ELSIF p_amount < 0 OR p_amount > h."amount_micros" THEN
    v_outcome := 'over_reservation';
  ELSE
    IF p_sequence = 0 THEN
      v_previous := NULL;
    ELSE
      SELECT x."receipt_hash" INTO v_previous FROM "spend_holds" x
        WHERE x."account_id" = p_account AND x."run_id" = p_run AND x."receipt_sequence" = p_sequence - 1;
      IF NOT FOUND THEN v_previous := 'none'; END IF;
    END IF;
    IF v_previous IS DISTINCT FROM p_previous OR EXISTS (SELECT 1 FROM "spend_holds" x
        WHERE x."account_id" = p_account AND x."run_id" = p_run AND x."receipt_sequence" = p_sequence) THEN
      v_outcome := 'chain_mismatch';
    END IF;
  END IF;
  IF v_outcome IS NOT NULL THEN
    RETURN QUERY SELECT v_outcome, h."id", h."run_id", h."kind", h."amount_micros", h."status"::text, h."settled_micros", h."expires_at", h."receipt";
    RETURN;
  END IF;
  UPDATE "spend_holds" x SET "status" = 'settled', "resolved_at" = p_now, "settled_micros" = p_amount,
      "receipt_sequence" = p_sequence, "receipt_hash" = p_hash, "receipt" = p_receipt
    WHERE x."id" = p_id
    RETURNING * INTO h;
  UPDATE "monthly_spend" m SET "held_micros" = m."held_micros" - h."amount_micros", "spent_micros" = m."spent_micros" + p_amount
    WHERE m."account_id" = p_account AND m."month" = h."month";
  UPDATE "accounts" a SET "held_micros" = a."held_micros" - h."amount_micros", "balance_micros" = a."balance_micros" - p_amount
    WHERE a."id" = p_account;
  RETURN QUERY SELECT 'resolved', h."id", h."run_id", h."kind", h."amount_micros", h."status"::text, h."settled_micros", h."expires_at", h."receipt";
END $fn$;

-- spend_reserve, with the rate check bounded by the limit (see 3. above); otherwise as before.
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
