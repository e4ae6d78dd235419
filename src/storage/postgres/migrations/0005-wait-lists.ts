/**
 * Migration 5, `wait-lists`: the executions parked on a key, in the order they parked (the
 * WaitList port), one row per waiter, and one plpgsql function per transition that needs more
 * than a plain statement, each with a header naming its arguments, results and errors
 * (docs/decisions/130). A waiter lives `p_ttl_ms` after it was added (database clock); an
 * expired waiter is skipped by every read and deleted in batches by later adds.
 *
 * @module
 */
import type { Migration } from './migration.js';

/** Expired waiters one add deletes at most. */
const PRUNE_BATCH = 100;

/** The `wait-lists` migration. */
export const waitListsMigration: Migration = {
  version: 5,
  name: 'wait-lists',
  sql: (n) => `
-- The arrival order of waiters, across keys (only the order within a key matters).
CREATE SEQUENCE ${n.waitListSequence};

-- One row per waiter: the parked execution's delayed job (job_id) waiting on key, seq its place.
CREATE TABLE ${n.waitListEntries} (
  key        text COLLATE "C" NOT NULL,
  job_id     text COLLATE "C" NOT NULL,
  seq        bigint NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (key, job_id)
);
CREATE INDEX wait_list_entries_order ON ${n.waitListEntries} (key, seq);
CREATE INDEX wait_list_entries_expiry ON ${n.waitListEntries} (expires_at);

-- wait_list_add: park p_job_id on p_key, at the end of its list unless it waits there already
-- (then it keeps its place, and its expiry is renewed). An expired entry of p_job_id counts as
-- absent: it goes to the end. Also deletes up to ${PRUNE_BATCH} expired waiters of any key.
--   Arguments: p_key, p_job_id, p_ttl_ms (>= 1).
--   Results: none.
--   Errors: 22023 RX_ARG when p_ttl_ms < 1.
CREATE FUNCTION ${n.waitListAdd}(p_key text, p_job_id text, p_ttl_ms bigint) RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
  IF p_ttl_ms IS NULL OR p_ttl_ms < 1 THEN
    RAISE EXCEPTION 'RX_ARG wait_list_add: ttl must be a positive integer' USING ERRCODE = '22023';
  END IF;
  INSERT INTO ${n.waitListEntries} AS w (key, job_id, seq, expires_at)
    VALUES (p_key, p_job_id, nextval('${n.waitListSequence}'), now() + p_ttl_ms * interval '1 ms')
    ON CONFLICT (key, job_id) DO UPDATE
      SET seq = CASE WHEN w.expires_at <= now() THEN excluded.seq ELSE w.seq END,
          expires_at = excluded.expires_at;
  DELETE FROM ${n.waitListEntries} AS w WHERE (w.key, w.job_id) IN (
    SELECT d.key, d.job_id FROM ${n.waitListEntries} AS d
      WHERE d.expires_at <= now() LIMIT ${PRUNE_BATCH} FOR UPDATE SKIP LOCKED);
END
$fn$;

-- wait_list_shift: remove and return the first live waiter of p_key. A waiter another call is
-- changing at this instant (its removal, a repeated add) is passed over for the next one, so
-- concurrent shifts take distinct waiters and never wait for each other.
--   Arguments: p_key.
--   Results: the waiter's job id, NULL when there is none.
--   Errors: none.
CREATE FUNCTION ${n.waitListShift}(p_key text) RETURNS text
LANGUAGE plpgsql AS $fn$
DECLARE
  v_job_id text;
BEGIN
  DELETE FROM ${n.waitListEntries} AS w WHERE (w.key, w.job_id) IN (
    SELECT f.key, f.job_id FROM ${n.waitListEntries} AS f
      WHERE f.key = p_key AND f.expires_at > now()
      ORDER BY f.seq LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING w.job_id INTO v_job_id;
  RETURN v_job_id;
END
$fn$;
`,
};
