/**
 * Migration 7, `events`: the log of sent events (the EventLog port), one row per kept event, and
 * one plpgsql function per transition, each with a header naming its arguments, results and
 * errors (docs/decisions/142). Receipt times are the database's clock (`now()`, in ms); an event
 * kept with a retention expires that long after its receipt, is skipped by every read, and is
 * deleted in batches by later appends.
 *
 * @module
 */
import type { Migration } from './migration.js';

/** Expired events one append deletes at most. */
const PRUNE_BATCH = 100;

/** The `events` migration. */
export const eventsMigration: Migration = {
  version: 7,
  name: 'events',
  sql: (n) => `
-- One row per kept event. received_at and ts are epoch ms; effects holds the executions the event
-- started (s), resumed (r) and cancelled (c), each a JSON array of ids; expires_at is null when
-- events are kept without a retention.
CREATE TABLE ${n.events} (
  id          text COLLATE "C" PRIMARY KEY,
  name        text COLLATE "C" NOT NULL,
  payload     json NOT NULL,
  ts          bigint NOT NULL,
  received_at bigint NOT NULL,
  effects     jsonb NOT NULL DEFAULT '{"s": [], "r": [], "c": []}',
  expires_at  timestamptz
);
CREATE INDEX events_received ON ${n.events} (received_at DESC, id DESC);
CREATE INDEX events_name_received ON ${n.events} (name, received_at DESC, id DESC);
CREATE INDEX events_expiry ON ${n.events} (expires_at) WHERE expires_at IS NOT NULL;

-- event_append: keep an event unless one with p_id is kept (an expired row counts as absent and
-- is replaced). Of concurrent appends of one id exactly one inserts; the others wait for it on
-- the primary key and answer duplicate. Also deletes up to ${PRUNE_BATCH} expired events.
--   Arguments: p_id, p_name, p_payload, p_ts (NULL: the receipt time), p_ttl_ms (NULL: kept).
--   Results: one row: accepted (true when stored now), and the kept event's name, payload, ts,
--            received_at, effects.
--   Errors: 22023 RX_ARG when p_ttl_ms < 1.
CREATE FUNCTION ${n.eventAppend}(p_id text, p_name text, p_payload json, p_ts bigint, p_ttl_ms bigint)
RETURNS TABLE (accepted boolean, name text, payload json, ts bigint, received_at bigint, effects jsonb)
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  v_now bigint := floor(extract(epoch FROM now()) * 1000)::bigint;
  v_expires timestamptz := CASE WHEN p_ttl_ms IS NULL THEN NULL ELSE now() + p_ttl_ms * interval '1 ms' END;
BEGIN
  IF p_ttl_ms IS NOT NULL AND p_ttl_ms < 1 THEN
    RAISE EXCEPTION 'RX_ARG event_append: ttl must be a positive integer' USING ERRCODE = '22023';
  END IF;
  DELETE FROM ${n.events} AS d WHERE d.id IN (
    SELECT x.id FROM ${n.events} AS x
      WHERE x.expires_at <= now() AND x.id <> p_id LIMIT ${PRUNE_BATCH} FOR UPDATE SKIP LOCKED);
  INSERT INTO ${n.events} AS e (id, name, payload, ts, received_at, expires_at)
    VALUES (p_id, p_name, p_payload, coalesce(p_ts, v_now), v_now, v_expires)
    ON CONFLICT (id) DO UPDATE
      SET name = excluded.name, payload = excluded.payload, ts = excluded.ts,
          received_at = excluded.received_at, effects = DEFAULT, expires_at = excluded.expires_at
      WHERE e.expires_at IS NOT NULL AND e.expires_at <= now();
  IF FOUND THEN
    RETURN QUERY SELECT true, p_name, p_payload, coalesce(p_ts, v_now), v_now, '{"s": [], "r": [], "c": []}'::jsonb;
  ELSE
    RETURN QUERY SELECT false, e.name::text, e.payload, e.ts, e.received_at, e.effects
      FROM ${n.events} AS e WHERE e.id = p_id;
  END IF;
END
$fn$;

-- event_add_effect: append p_execution_id to the p_kind list of a kept event's effects, unless it
-- is there already.
--   Arguments: p_id, p_kind ('s' started, 'r' resumed, 'c' cancelled), p_execution_id.
--   Results: true when the event is kept (the execution is in the list now), false otherwise.
--   Errors: 22023 RX_ARG when p_kind is not one of s, r, c.
CREATE FUNCTION ${n.eventAddEffect}(p_id text, p_kind text, p_execution_id text) RETURNS boolean
LANGUAGE plpgsql AS $fn$
BEGIN
  IF p_kind IS NULL OR p_kind NOT IN ('s', 'r', 'c') THEN
    RAISE EXCEPTION 'RX_ARG event_add_effect: kind must be s, r or c' USING ERRCODE = '22023';
  END IF;
  UPDATE ${n.events} AS e
    SET effects = CASE WHEN e.effects -> p_kind ? p_execution_id THEN e.effects
                       ELSE jsonb_set(e.effects, ARRAY[p_kind], (e.effects -> p_kind) || to_jsonb(p_execution_id)) END
    WHERE e.id = p_id AND (e.expires_at IS NULL OR e.expires_at > now());
  RETURN FOUND;
END
$fn$;
`,
};
