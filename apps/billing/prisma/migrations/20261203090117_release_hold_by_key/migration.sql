-- Generated from apps/billing/sql/functions/ (pnpm --filter @drael/billing sql:migration <name>).
-- billing_release_by_key (billing.holds.release-by-key.v1): a gateway that never heard a create's
-- answer (lost reply, timeout, client hung up) releases the hold by its idempotency key, or leaves
-- a released tombstone under the key so that a create arriving later takes nothing (attack F5: the
-- orphan hold used to count against the allowance until its TTL).

CREATE OR REPLACE FUNCTION "billing_release_by_key"(p_id uuid, p_account uuid, p_key text, p_tool text, p_meter text, p_units int,
                                          p_now timestamptz)
RETURNS TABLE(outcome text, id uuid, tool text, units int, plan_units int, extra_units int,
              status text, settled_units int, expires_at timestamptz)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
DECLARE
  h "holds"%ROWTYPE;
  r record;
BEGIN
  INSERT INTO "holds" ("id", "account_id", "idempotency_key", "tool", "meter", "units", "plan_units", "extra_units",
                       "week_start", "day", "status", "expires_at", "created_at", "resolved_at")
    SELECT p_id, p_account, p_key, p_tool, p_meter, p_units, p_units, 0,
           date_trunc('week', p_now AT TIME ZONE 'UTC')::date, (p_now AT TIME ZONE 'UTC')::date, 'released', p_now, p_now, p_now
      WHERE EXISTS (SELECT 1 FROM "accounts" a WHERE a."id" = p_account)
    ON CONFLICT ("account_id", "idempotency_key") DO NOTHING
    RETURNING * INTO h;
  IF FOUND THEN
    RETURN QUERY SELECT 'voided', h."id", h."tool", h."units", h."plan_units", h."extra_units", h."status"::text, h."settled_units", h."expires_at";
    RETURN;
  END IF;

  SELECT * INTO h FROM "holds" x WHERE x."account_id" = p_account AND x."idempotency_key" = p_key;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'account_not_found', NULL::uuid, NULL::text, NULL::int, NULL::int, NULL::int, NULL::text, NULL::int, NULL::timestamptz;
    RETURN;
  END IF;
  IF h."tool" <> p_tool OR h."units" <> p_units THEN
    RETURN QUERY SELECT 'conflict', h."id", h."tool", h."units", h."plan_units", h."extra_units", h."status"::text, h."settled_units", h."expires_at";
    RETURN;
  END IF;
  SELECT * INTO r FROM billing_resolve(h."id", p_account, 'released', 0, p_now);
  RETURN QUERY SELECT CASE WHEN r.outcome = 'resolved' THEN 'released' ELSE 'resolved_before' END,
    r.id, r.tool, r.units, r.plan_units, r.extra_units, r.status, r.settled_units, r.expires_at;
END $fn$;
