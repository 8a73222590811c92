-- THE definition of spend_resolve: edit here, then write the migration that applies it
-- (pnpm --filter @drael/billing sql:migration <name>; docs/recipes/add-a-migration.md).
-- test/sql-functions.spec.ts fails while the newest migration's copy differs from this file.
--
-- spend_resolve: releases or expires a spend hold; the conditional UPDATE lets exactly one
-- resolution win. Outcomes: resolved | resolved_before | not_found.
-- Locks in the one order of every spend function: the account row, then the hold, then the
-- month (20261129154000: the other order deadlocked a reserve against a settle).
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
