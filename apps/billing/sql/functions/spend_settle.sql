-- THE definition of spend_settle: edit here, then write the migration that applies it
-- (pnpm --filter @drael/billing sql:migration <name>; docs/recipes/add-a-migration.md).
-- test/sql-functions.spec.ts fails while the newest migration's copy differs from this file.
--
-- spend_settle: settles a step with its actual cost and the receipt billing signed for it. The
-- hold must be this account's, for this run and kind, and the cost within it; the receipt must
-- extend the run's chain as billing issued it (sequence 0 links to nothing, n to the hash issued
-- at n-1; one receipt per place, the unique index under it). Outcomes: resolved | resolved_before
-- (with the receipt stored the first time) | not_found | mismatch | over_reservation | chain_mismatch.
-- Locks in the one order of every spend function: the account row, then the hold, then the
-- month (20261129154000: the other order deadlocked a reserve against a settle).
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
