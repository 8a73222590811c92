-- THE definition of billing_hold: edit here, then write the migration that applies it
-- (pnpm --filter @drael/billing sql:migration <name>; docs/recipes/add-a-migration.md).
-- test/sql-functions.spec.ts fails while the newest migration's copy differs from this file.
--
-- billing_hold: takes units from the week's allowance, then (when the account turned extra usage
-- on) from the day's ceiling, and records the hold; one round trip, one transaction. Outcomes:
-- created | existing (same idempotency key and amount) | conflict (same key, other amount) |
-- weekly_allowance_reached | daily_ceiling_reached | account_not_found | plan_required.
-- p_allowances: {"<plan id>": <weekly figure of this meter>} for the plans that include the tool
-- (the figures live in the service's plans.ts; a plan missing here does not include the tool).
CREATE OR REPLACE FUNCTION "billing_hold"(p_id uuid, p_account uuid, p_key text, p_tool text, p_meter text, p_units int,
                               p_allowances jsonb, p_now timestamptz, p_ttl_s int)
RETURNS TABLE(outcome text, plan text, id uuid, tool text, units int, plan_units int, extra_units int,
              status text, settled_units int, expires_at timestamptz)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
DECLARE
  v_week date := date_trunc('week', p_now AT TIME ZONE 'UTC')::date;
  v_day date := (p_now AT TIME ZONE 'UTC')::date;
  v_free int;
  v_plan int;
  v_extra int := 0;
  v_enabled boolean;
  v_ceiling int;
  h "holds"%ROWTYPE;
  v_plan_name text;
  v_allowance int;
BEGIN
  SELECT a."plan", a."extra_usage_enabled", a."daily_ceiling" INTO v_plan_name, v_enabled, v_ceiling
    FROM "accounts" a WHERE a."id" = p_account;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'account_not_found', NULL::text, NULL::uuid, NULL::text, NULL::int, NULL::int, NULL::int, NULL::text, NULL::int, NULL::timestamptz;
    RETURN;
  END IF;
  v_allowance := (p_allowances ->> v_plan_name)::int;
  IF v_allowance IS NULL THEN
    -- spec 01: a tool the plan does not include answers plan_required, before any row is written.
    RETURN QUERY SELECT 'plan_required', v_plan_name, NULL::uuid, NULL::text, NULL::int, NULL::int, NULL::int, NULL::text, NULL::int, NULL::timestamptz;
    RETURN;
  END IF;
  INSERT INTO "weekly_allowances" ("account_id", "week_start", "meter", "allowance")
    VALUES (p_account, v_week, p_meter, v_allowance) ON CONFLICT DO NOTHING;
  -- The row lock serialises holds of one account and meter; every check below sees the latest figures.
  SELECT w."allowance" - w."used" - w."held" INTO v_free FROM "weekly_allowances" w
    WHERE w."account_id" = p_account AND w."week_start" = v_week AND w."meter" = p_meter FOR UPDATE;

  SELECT * INTO h FROM "holds" x WHERE x."account_id" = p_account AND x."idempotency_key" = p_key;
  IF FOUND THEN
    RETURN QUERY SELECT CASE WHEN h."tool" = p_tool AND h."units" = p_units THEN 'existing' ELSE 'conflict' END, v_plan_name,
      h."id", h."tool", h."units", h."plan_units", h."extra_units", h."status"::text, h."settled_units", h."expires_at";
    RETURN;
  END IF;

  v_plan := LEAST(p_units, GREATEST(v_free, 0));
  IF v_plan < p_units THEN
    IF NOT COALESCE(v_enabled, false) THEN
      RETURN QUERY SELECT 'weekly_allowance_reached', v_plan_name, NULL::uuid, NULL::text, NULL::int, NULL::int, NULL::int, NULL::text, NULL::int, NULL::timestamptz;
      RETURN;
    END IF;
    v_extra := p_units - v_plan;
    INSERT INTO "daily_extras" ("account_id", "day", "ceiling") VALUES (p_account, v_day, v_ceiling) ON CONFLICT DO NOTHING;
    UPDATE "daily_extras" d SET "held" = d."held" + v_extra
      WHERE d."account_id" = p_account AND d."day" = v_day AND d."used" + d."held" + v_extra <= d."ceiling";
    IF NOT FOUND THEN
      RETURN QUERY SELECT 'daily_ceiling_reached', v_plan_name, NULL::uuid, NULL::text, NULL::int, NULL::int, NULL::int, NULL::text, NULL::int, NULL::timestamptz;
      RETURN;
    END IF;
  END IF;
  IF v_plan > 0 THEN
    UPDATE "weekly_allowances" w SET "held" = w."held" + v_plan
      WHERE w."account_id" = p_account AND w."week_start" = v_week AND w."meter" = p_meter;
  END IF;

  INSERT INTO "holds" ("id", "account_id", "idempotency_key", "tool", "meter", "units", "plan_units", "extra_units",
                       "week_start", "day", "status", "expires_at", "created_at")
    VALUES (p_id, p_account, p_key, p_tool, p_meter, p_units, v_plan, v_extra, v_week, v_day, 'held',
            p_now + make_interval(secs => p_ttl_s), p_now)
    ON CONFLICT ("account_id", "idempotency_key") DO NOTHING
    RETURNING * INTO h;
  IF NOT FOUND THEN
    -- The same key raced in on another meter and won: give back what this call took.
    IF v_plan > 0 THEN
      UPDATE "weekly_allowances" w SET "held" = w."held" - v_plan
        WHERE w."account_id" = p_account AND w."week_start" = v_week AND w."meter" = p_meter;
    END IF;
    IF v_extra > 0 THEN
      UPDATE "daily_extras" d SET "held" = d."held" - v_extra WHERE d."account_id" = p_account AND d."day" = v_day;
    END IF;
    SELECT * INTO h FROM "holds" x WHERE x."account_id" = p_account AND x."idempotency_key" = p_key;
    RETURN QUERY SELECT CASE WHEN h."tool" = p_tool AND h."units" = p_units THEN 'existing' ELSE 'conflict' END, v_plan_name,
      h."id", h."tool", h."units", h."plan_units", h."extra_units", h."status"::text, h."settled_units", h."expires_at";
    RETURN;
  END IF;
  RETURN QUERY SELECT 'created', v_plan_name, h."id", h."tool", h."units", h."plan_units", h."extra_units", h."status"::text, h."settled_units", h."expires_at";
END $fn$;
