/**
 * Migration 9, `execution-events`: each execution's events in order (the ExecutionStream port,
 * `engine.watch`), one row per event, its position a number from one sequence, and the function
 * that appends and notifies (docs/decisions/138). An append takes a transaction-level advisory
 * lock per execution before it numbers that execution's events, so the positions of one
 * execution commit in increasing order: a reader that saw a position never finds a smaller one
 * later. The NOTIFY (payload: the execution id) is sent at commit.
 *
 * @module
 */
import type { Migration } from './migration.js';

/** Expired events one append deletes at most. */
const PRUNE_BATCH = 100;

/** The `execution-events` migration. */
export const executionEventsMigration: Migration = {
  version: 9,
  name: 'execution-events',
  sql: (n) => `
-- The order of events, across executions (only the order within an execution matters).
CREATE SEQUENCE ${n.executionEventSequence};

-- One row per event of an execution; expires_at NULL: kept as long as the records are.
CREATE TABLE ${n.executionEvents} (
  execution_id text COLLATE "C" NOT NULL,
  position     bigint NOT NULL,
  event        json NOT NULL,
  expires_at   timestamptz,
  PRIMARY KEY (execution_id, position)
);
CREATE INDEX execution_events_expiry ON ${n.executionEvents} (expires_at) WHERE expires_at IS NOT NULL;

-- execution_events_append: append p_events[i] to the stream of p_ids[i], in array order, and
-- notify the channel ${n.eventsChannel} once per execution (at commit). Also deletes up to
-- ${PRUNE_BATCH} expired events of any execution.
--   Arguments: p_ids, p_events (same length), p_ttl_ms (NULL: kept; else >= 1).
--   Results: none.
--   Errors: 22023 RX_ARG when the arrays differ in length or p_ttl_ms < 1.
CREATE FUNCTION ${n.executionEventsAppend}(p_ids text[], p_events json[], p_ttl_ms bigint) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
  v_id text;
BEGIN
  IF cardinality(p_ids) IS DISTINCT FROM cardinality(p_events) THEN
    RAISE EXCEPTION 'RX_ARG execution_events_append: ids and events differ in length' USING ERRCODE = '22023';
  END IF;
  IF p_ttl_ms IS NOT NULL AND p_ttl_ms < 1 THEN
    RAISE EXCEPTION 'RX_ARG execution_events_append: ttl must be a positive integer' USING ERRCODE = '22023';
  END IF;
  FOR v_id IN SELECT DISTINCT u.id FROM unnest(p_ids) AS u(id) ORDER BY 1 LOOP
    PERFORM pg_advisory_xact_lock(hashtextextended('${n.executionEvents}:' || v_id, 0));
  END LOOP;
  INSERT INTO ${n.executionEvents} (execution_id, position, event, expires_at)
    SELECT u.id, nextval('${n.executionEventSequence}'), u.event,
           CASE WHEN p_ttl_ms IS NULL THEN NULL ELSE now() + p_ttl_ms * interval '1 ms' END
      FROM unnest(p_ids, p_events) WITH ORDINALITY AS u(id, event, i)
      ORDER BY u.i;
  FOR v_id IN SELECT DISTINCT u.id FROM unnest(p_ids) AS u(id) LOOP
    PERFORM pg_notify('${n.eventsChannel}', v_id);
  END LOOP;
  DELETE FROM ${n.executionEvents} AS e WHERE (e.execution_id, e.position) IN (
    SELECT d.execution_id, d.position FROM ${n.executionEvents} AS d
      WHERE d.expires_at IS NOT NULL AND d.expires_at <= now() LIMIT ${PRUNE_BATCH} FOR UPDATE SKIP LOCKED);
END
$fn$;
`,
};
