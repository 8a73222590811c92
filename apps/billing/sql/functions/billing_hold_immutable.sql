-- THE definition of billing_hold_immutable: edit here, then write the migration that applies it
-- (pnpm --filter @drael/billing sql:migration <name>; docs/recipes/add-a-migration.md).
-- test/sql-functions.spec.ts fails while the newest migration's copy differs from this file.
--
-- A resolved hold never changes again (a hold resolves exactly once): the trigger function of
-- holds_resolve_once and spend_holds_resolve_once.
CREATE OR REPLACE FUNCTION "billing_hold_immutable"() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF OLD."status" <> 'held' THEN
    RAISE EXCEPTION 'hold % is already %', OLD."id", OLD."status" USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $fn$;
