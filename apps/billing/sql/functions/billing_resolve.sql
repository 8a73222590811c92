-- THE definition of billing_resolve: edit here, then write the migration that applies it
-- (pnpm --filter @drael/billing sql:migration <name>; docs/recipes/add-a-migration.md).
-- test/sql-functions.spec.ts fails while the newest migration's copy differs from this file.
--
-- billing_resolve: settles (p_status 'settled', p_units capped at the hold), releases or expires a
-- hold. The conditional UPDATE lets exactly one of any racing resolutions win; the allowance's
-- held units move to used (what was settled) or back (the rest). Outcomes: resolved | resolved_before | not_found.
CREATE OR REPLACE FUNCTION "billing_resolve"(p_id uuid, p_account uuid, p_status "HoldStatus", p_units int, p_now timestamptz)
RETURNS TABLE(outcome text, id uuid, tool text, units int, plan_units int, extra_units int,
              status text, settled_units int, expires_at timestamptz)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
DECLARE
  h "holds"%ROWTYPE;
  v_settled int;
  v_plan_used int;
BEGIN
  UPDATE "holds" x SET "status" = p_status, "resolved_at" = p_now,
      "settled_units" = CASE WHEN p_status = 'settled' THEN LEAST(GREATEST(p_units, 0), x."units") END
    WHERE x."id" = p_id AND x."account_id" = p_account AND x."status" = 'held'
    RETURNING * INTO h;
  IF NOT FOUND THEN
    SELECT * INTO h FROM "holds" x WHERE x."id" = p_id AND x."account_id" = p_account;
    IF NOT FOUND THEN
      RETURN QUERY SELECT 'not_found', NULL::uuid, NULL::text, NULL::int, NULL::int, NULL::int, NULL::text, NULL::int, NULL::timestamptz;
      RETURN;
    END IF;
    RETURN QUERY SELECT 'resolved_before', h."id", h."tool", h."units", h."plan_units", h."extra_units", h."status"::text, h."settled_units", h."expires_at";
    RETURN;
  END IF;
  v_settled := COALESCE(h."settled_units", 0);
  -- Settled units count against the weekly allowance first, then against extra usage.
  v_plan_used := LEAST(v_settled, h."plan_units");
  IF h."plan_units" > 0 THEN
    UPDATE "weekly_allowances" w SET "held" = w."held" - h."plan_units", "used" = w."used" + v_plan_used
      WHERE w."account_id" = h."account_id" AND w."week_start" = h."week_start" AND w."meter" = h."meter";
  END IF;
  IF h."extra_units" > 0 THEN
    UPDATE "daily_extras" d SET "held" = d."held" - h."extra_units", "used" = d."used" + (v_settled - v_plan_used)
      WHERE d."account_id" = h."account_id" AND d."day" = h."day";
  END IF;
  RETURN QUERY SELECT 'resolved', h."id", h."tool", h."units", h."plan_units", h."extra_units", h."status"::text, h."settled_units", h."expires_at";
END $fn$;
