-- CreateEnum
CREATE TYPE "ToolLevel" AS ENUM ('none', 'l1_http', 'l3_shell', 'l4_browser');

-- CreateEnum
CREATE TYPE "HoldStatus" AS ENUM ('held', 'settled', 'released', 'expired');

-- CreateTable
CREATE TABLE "accounts" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "plan" TEXT NOT NULL,
    "extra_usage_enabled" BOOLEAN NOT NULL DEFAULT false,
    "daily_ceiling" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "accounts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "name" TEXT,
    "hash" CHAR(64) NOT NULL,
    "hint" TEXT NOT NULL,
    "tool_level" "ToolLevel" NOT NULL,
    "per_minute" INTEGER NOT NULL,
    "per_hour" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "weekly_allowances" (
    "account_id" UUID NOT NULL,
    "week_start" DATE NOT NULL,
    "meter" TEXT NOT NULL,
    "allowance" INTEGER NOT NULL,
    "used" INTEGER NOT NULL DEFAULT 0,
    "held" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "weekly_allowances_pkey" PRIMARY KEY ("account_id","week_start","meter")
);

-- CreateTable
CREATE TABLE "daily_extras" (
    "account_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "ceiling" INTEGER NOT NULL,
    "used" INTEGER NOT NULL DEFAULT 0,
    "held" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "daily_extras_pkey" PRIMARY KEY ("account_id","day")
);

-- CreateTable
CREATE TABLE "holds" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "tool" TEXT NOT NULL,
    "meter" TEXT NOT NULL,
    "units" INTEGER NOT NULL,
    "plan_units" INTEGER NOT NULL,
    "extra_units" INTEGER NOT NULL,
    "week_start" DATE NOT NULL,
    "day" DATE NOT NULL,
    "status" "HoldStatus" NOT NULL DEFAULT 'held',
    "settled_units" INTEGER,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "resolved_at" TIMESTAMPTZ(3),

    CONSTRAINT "holds_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_hash_key" ON "api_keys"("hash");

-- CreateIndex
CREATE INDEX "api_keys_account_id_idx" ON "api_keys"("account_id");

-- CreateIndex
CREATE INDEX "holds_status_expires_at_idx" ON "holds"("status", "expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "holds_account_id_idempotency_key_key" ON "holds"("account_id", "idempotency_key");

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "weekly_allowances" ADD CONSTRAINT "weekly_allowances_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "daily_extras" ADD CONSTRAINT "daily_extras_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "holds" ADD CONSTRAINT "holds_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- ---------------------------------------------------------------------------------------------
-- Written by hand (Prisma does not model these). The database itself keeps billing's invariants,
-- so no code path, retry or race can overdraw an allowance or resolve a hold twice.
-- ---------------------------------------------------------------------------------------------

ALTER TABLE "accounts" ADD CONSTRAINT "accounts_ceiling_nonnegative" CHECK ("daily_ceiling" >= 0);
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_limits_positive" CHECK ("per_minute" > 0 AND "per_hour" > 0);
ALTER TABLE "weekly_allowances" ADD CONSTRAINT "weekly_allowances_within"
  CHECK ("allowance" >= 0 AND "used" >= 0 AND "held" >= 0 AND "used" + "held" <= "allowance");
ALTER TABLE "daily_extras" ADD CONSTRAINT "daily_extras_within"
  CHECK ("ceiling" >= 0 AND "used" >= 0 AND "held" >= 0 AND "used" + "held" <= "ceiling");
ALTER TABLE "holds" ADD CONSTRAINT "holds_units_split"
  CHECK ("units" > 0 AND "plan_units" >= 0 AND "extra_units" >= 0 AND "plan_units" + "extra_units" = "units");
ALTER TABLE "holds" ADD CONSTRAINT "holds_resolution"
  CHECK (("status" = 'held') = ("resolved_at" IS NULL)
     AND ("status" = 'settled') = ("settled_units" IS NOT NULL)
     AND ("settled_units" IS NULL OR ("settled_units" >= 0 AND "settled_units" <= "units")));

-- A resolved hold never changes again (a hold resolves exactly once).
CREATE FUNCTION "billing_hold_immutable"() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF OLD."status" <> 'held' THEN
    RAISE EXCEPTION 'hold % is already %', OLD."id", OLD."status" USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $fn$;
CREATE TRIGGER "holds_resolve_once" BEFORE UPDATE ON "holds" FOR EACH ROW EXECUTE FUNCTION "billing_hold_immutable"();

-- billing_hold: takes units from the week's allowance, then (when the account turned extra usage
-- on) from the day's ceiling, and records the hold; one round trip, one transaction. Outcomes:
-- created | existing (same idempotency key and amount) | conflict (same key, other amount) |
-- weekly_allowance_reached | daily_ceiling_reached.
CREATE FUNCTION "billing_hold"(p_id uuid, p_account uuid, p_key text, p_tool text, p_meter text, p_units int,
                               p_allowance int, p_now timestamptz, p_ttl_s int)
RETURNS TABLE(outcome text, id uuid, tool text, units int, plan_units int, extra_units int,
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
BEGIN
  INSERT INTO "weekly_allowances" ("account_id", "week_start", "meter", "allowance")
    VALUES (p_account, v_week, p_meter, p_allowance) ON CONFLICT DO NOTHING;
  -- The row lock serialises holds of one account and meter; every check below sees the latest figures.
  SELECT w."allowance" - w."used" - w."held" INTO v_free FROM "weekly_allowances" w
    WHERE w."account_id" = p_account AND w."week_start" = v_week AND w."meter" = p_meter FOR UPDATE;

  SELECT * INTO h FROM "holds" x WHERE x."account_id" = p_account AND x."idempotency_key" = p_key;
  IF FOUND THEN
    RETURN QUERY SELECT CASE WHEN h."tool" = p_tool AND h."units" = p_units THEN 'existing' ELSE 'conflict' END,
      h."id", h."tool", h."units", h."plan_units", h."extra_units", h."status"::text, h."settled_units", h."expires_at";
    RETURN;
  END IF;

  v_plan := LEAST(p_units, GREATEST(v_free, 0));
  IF v_plan < p_units THEN
    SELECT a."extra_usage_enabled", a."daily_ceiling" INTO v_enabled, v_ceiling FROM "accounts" a WHERE a."id" = p_account;
    IF NOT COALESCE(v_enabled, false) THEN
      RETURN QUERY SELECT 'weekly_allowance_reached', NULL::uuid, NULL::text, NULL::int, NULL::int, NULL::int, NULL::text, NULL::int, NULL::timestamptz;
      RETURN;
    END IF;
    v_extra := p_units - v_plan;
    INSERT INTO "daily_extras" ("account_id", "day", "ceiling") VALUES (p_account, v_day, v_ceiling) ON CONFLICT DO NOTHING;
    UPDATE "daily_extras" d SET "held" = d."held" + v_extra
      WHERE d."account_id" = p_account AND d."day" = v_day AND d."used" + d."held" + v_extra <= d."ceiling";
    IF NOT FOUND THEN
      RETURN QUERY SELECT 'daily_ceiling_reached', NULL::uuid, NULL::text, NULL::int, NULL::int, NULL::int, NULL::text, NULL::int, NULL::timestamptz;
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
    RETURN QUERY SELECT CASE WHEN h."tool" = p_tool AND h."units" = p_units THEN 'existing' ELSE 'conflict' END,
      h."id", h."tool", h."units", h."plan_units", h."extra_units", h."status"::text, h."settled_units", h."expires_at";
    RETURN;
  END IF;
  RETURN QUERY SELECT 'created', h."id", h."tool", h."units", h."plan_units", h."extra_units", h."status"::text, h."settled_units", h."expires_at";
END $fn$;

-- billing_resolve: settles (p_status 'settled', p_units capped at the hold), releases or expires a
-- hold. The conditional UPDATE lets exactly one of any racing resolutions win; the allowance's
-- held units move to used (what was settled) or back (the rest). Outcomes: resolved | resolved_before | not_found.
CREATE FUNCTION "billing_resolve"(p_id uuid, p_account uuid, p_status "HoldStatus", p_units int, p_now timestamptz)
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
