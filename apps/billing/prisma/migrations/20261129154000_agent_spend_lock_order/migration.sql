-- One lock order for every agent spend function: the account row, then the hold, then the month.
-- spend_reserve locked the account and then the month; spend_settle and spend_resolve updated the
-- month and then the account, so a reserve and a settle of one account could deadlock (seen as
-- timeouts and failed runs in bench/agent-run at concurrency 10). Bodies otherwise unchanged.

CREATE OR REPLACE FUNCTION "spend_resolve"(p_id uuid, p_account uuid, p_status "HoldStatus", p_now timestamptz)
RETURNS TABLE(outcome text, id uuid, run_id text, kind text, amount_micros bigint, status text, settled_micros bigint,
              expires_at timestamptz, receipt jsonb)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
DECLARE
  h "spend_holds"%ROWTYPE;
BEGIN
  IF p_status NOT IN ('released', 'expired') THEN
    RAISE EXCEPTION 'spend_resolve releases or expires; settle with spend_settle' USING ERRCODE = 'invalid_parameter_value';
  END IF;
  -- The account row first, as spend_reserve takes it: one lock order for every spend function.
  PERFORM 1 FROM "accounts" a WHERE a."id" = p_account FOR NO KEY UPDATE;
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

CREATE OR REPLACE FUNCTION "spend_settle"(p_id uuid, p_account uuid, p_run text, p_kind text, p_amount bigint, p_now timestamptz,
                               p_sequence int, p_previous text, p_hash text, p_receipt jsonb)
RETURNS TABLE(outcome text, id uuid, run_id text, kind text, amount_micros bigint, status text, settled_micros bigint,
              expires_at timestamptz, receipt jsonb)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
DECLARE
  h "spend_holds"%ROWTYPE;
  v_previous text;
  v_outcome text;
BEGIN
  -- The account row first, as spend_reserve takes it: one lock order for every spend function.
  PERFORM 1 FROM "accounts" a WHERE a."id" = p_account FOR NO KEY UPDATE;
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

