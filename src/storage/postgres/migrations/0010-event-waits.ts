/**
 * Migration 10, `event-waits`: the index of executions waiting for an event (the EventWaits port:
 * `.waitForEvent` resumes, `.cancelOn` cancels), one row per registration, keyed by event name
 * and canonical match key, and one plpgsql function per transition, each with a header naming its
 * arguments, results and errors (docs/decisions/148). `since` is the database's clock (`now()`,
 * in ms), the clock of the events' receipt times.
 *
 * @module
 */
import type { Migration } from './migration.js';

/** The `event-waits` migration. */
export const eventWaitsMigration: Migration = {
  version: 10,
  name: 'event-waits',
  sql: (n) => `
-- One row per registration. A lookup reads the rows of one (event, match_key, kind) in
-- (execution_id, ref) order: the primary key's order, so it reads no other key's rows.
CREATE TABLE ${n.eventWaits} (
  event        text COLLATE "C" NOT NULL,
  match_key    text COLLATE "C" NOT NULL,
  kind         text COLLATE "C" NOT NULL CHECK (kind IN ('resume', 'cancel')),
  execution_id text COLLATE "C" NOT NULL,
  ref          text COLLATE "C" NOT NULL,
  since        bigint NOT NULL,
  PRIMARY KEY (event, match_key, kind, execution_id, ref)
);

-- event_wait_add: file a registration unless it is filed. Of concurrent adds of one registration
-- exactly one inserts; the others wait for it on the primary key and answer its time.
--   Arguments: p_event, p_match_key, p_kind ('resume' or 'cancel'), p_execution_id, p_ref.
--   Results: the registration's first time, epoch ms on the database clock.
--   Errors: 23514 (check_violation) when p_kind is neither 'resume' nor 'cancel'.
CREATE FUNCTION ${n.eventWaitAdd}(p_event text, p_match_key text, p_kind text, p_execution_id text, p_ref text)
RETURNS bigint
LANGUAGE plpgsql AS $fn$
DECLARE
  v_since bigint;
BEGIN
  INSERT INTO ${n.eventWaits} AS w (event, match_key, kind, execution_id, ref, since)
    VALUES (p_event, p_match_key, p_kind, p_execution_id, p_ref, floor(extract(epoch FROM now()) * 1000)::bigint)
    ON CONFLICT (event, match_key, kind, execution_id, ref) DO NOTHING
    RETURNING w.since INTO v_since;
  IF v_since IS NULL THEN
    SELECT w.since INTO v_since FROM ${n.eventWaits} AS w
      WHERE w.event = p_event AND w.match_key = p_match_key AND w.kind = p_kind
        AND w.execution_id = p_execution_id AND w.ref = p_ref;
  END IF;
  RETURN v_since;
END
$fn$;

-- event_wait_remove: remove a registration.
--   Arguments: p_event, p_match_key, p_kind, p_execution_id, p_ref.
--   Results: true when it was filed (and is gone), false when it was not (nothing changed).
--   Errors: none.
CREATE FUNCTION ${n.eventWaitRemove}(p_event text, p_match_key text, p_kind text, p_execution_id text, p_ref text)
RETURNS boolean
LANGUAGE plpgsql AS $fn$
BEGIN
  DELETE FROM ${n.eventWaits} AS w
    WHERE w.event = p_event AND w.match_key = p_match_key AND w.kind = p_kind
      AND w.execution_id = p_execution_id AND w.ref = p_ref;
  RETURN FOUND;
END
$fn$;
`,
};
