-- THE definition of billing_release_by_key: edit here, then write the migration that applies it
-- (pnpm --filter @drael/billing sql:migration <name>; docs/recipes/add-a-migration.md).
-- test/sql-functions.spec.ts fails while the newest migration's copy differs from this file.
--
-- billing_release_by_key: the caller of billing_hold never heard its answer (a lost reply, a
-- timeout, a client that hung up), so it has no hold id; it names the hold by the create's
-- idempotency key, tool and units. Whichever reaches the database first, no hold stays held:
--   * the create landed first: the hold is released here (as billing_resolve does) -> released;
--     already resolved (the sweeper, an earlier call) -> resolved_before; nothing changes;
--   * the create has not landed (it may still be in flight): a TOMBSTONE is written under the key,
--     a hold born released that took nothing (plan_units = units is only its split; no allowance
--     or day row is touched) -> voided. A create arriving later finds the key in billing_hold's
--     idempotency check and answers this released hold ('existing') without taking a unit.
-- The race of the two is decided by the unique index (account_id, idempotency_key): the tombstone's
-- INSERT ... ON CONFLICT waits for a create's uncommitted row and then sees it, and a create's INSERT
-- waits for an uncommitted tombstone and then gives back what it took (billing_hold's own ON
-- CONFLICT branch). Outcomes: voided | released | resolved_before | conflict (the key holds another
-- tool or amount: left alone) | account_not_found.
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
