/**
 * Migration 6, `wait-list-shift`: `wait_list_shift` takes its waiter in two statements — the
 * first live waiter locked (`FOR UPDATE SKIP LOCKED`), then that one row deleted by its key.
 * Version 5 deleted `WHERE … IN (SELECT … LIMIT 1 FOR UPDATE SKIP LOCKED)` in one statement; in a
 * plan that runs the subquery again for each row (a nested-loop semi join, which a loaded
 * database picked), the rerun passes over the row the statement has just deleted and yields the
 * next waiter, so one shift deleted several waiters and failed ("query returned more than one
 * row"): the release's wake-up was lost and its waiters woke by their fallback job
 * (docs/decisions/140).
 *
 * @module
 */
import type { Migration } from './migration.js';

/** The `wait-list-shift` migration. */
export const waitListShiftMigration: Migration = {
  version: 6,
  name: 'wait-list-shift',
  sql: (n) => `
-- wait_list_shift: remove and return the first live waiter of p_key. A waiter another call is
-- changing at this instant (its removal, a repeated add) is passed over for the next one, so
-- concurrent shifts take distinct waiters and never wait for each other. The waiter is locked by
-- one statement and deleted by its key in the next: exactly one row, whatever the plan.
--   Arguments: p_key.
--   Results: the waiter's job id, NULL when there is none.
--   Errors: none.
CREATE OR REPLACE FUNCTION ${n.waitListShift}(p_key text) RETURNS text
LANGUAGE plpgsql AS $fn$
DECLARE
  v_job_id text;
BEGIN
  SELECT f.job_id INTO v_job_id FROM ${n.waitListEntries} AS f
    WHERE f.key = p_key AND f.expires_at > now()
    ORDER BY f.seq LIMIT 1 FOR UPDATE SKIP LOCKED;
  IF v_job_id IS NULL THEN
    RETURN NULL;
  END IF;
  DELETE FROM ${n.waitListEntries} AS w WHERE w.key = p_key AND w.job_id = v_job_id;
  RETURN v_job_id;
END
$fn$;
`,
};
