/**
 * Migration 4, `fanout`: the ledgers of fan-out maps (the FanOutLedger port) — one row per map
 * with its counters, one row per settled element — and one plpgsql function per transition, each
 * with a header naming its arguments, results and errors (docs/decisions/130).
 *
 * Every transition locks the map's row first (`FOR UPDATE`), so settlements from any number of
 * workers are counted once and claim distinct elements. A ledger lives `p_ttl_ms` after its last
 * write (database clock); an expired ledger reads as absent and is deleted by a later open. An
 * unknown map or element raises SQLSTATE P0002 with a message starting `RX_FANOUT_UNKNOWN`;
 * a refused argument raises 22023 with `RX_ARG`.
 *
 * @module
 */
import type { Migration } from './migration.js';

/** Expired ledgers one open deletes at most. */
const PRUNE_BATCH = 100;

/** The `fanout` migration. */
export const fanOutMigration: Migration = {
  version: 4,
  name: 'fanout',
  sql: (n) => `
-- One row per map (id '<parent execution id>/<map step>'). next_index: elements dispatched so
-- far (0 .. next_index - 1); stopped: an atomic map stopped dispatching after a failure; phase:
-- 'collect', then 'rollback' for good; wake_job: the parent's wake job registered last.
CREATE TABLE ${n.fanOutLedgers} (
  map_id     text COLLATE "C" PRIMARY KEY,
  total      integer NOT NULL,
  batch      integer NOT NULL,
  atomic     boolean NOT NULL,
  next_index integer NOT NULL,
  settled    integer NOT NULL DEFAULT 0,
  failed     integer NOT NULL DEFAULT 0,
  stopped    boolean NOT NULL DEFAULT false,
  phase      text NOT NULL DEFAULT 'collect',
  wake_job   text,
  expires_at timestamptz NOT NULL
);
CREATE INDEX fanout_ledgers_expiry ON ${n.fanOutLedgers} (expires_at);

-- One row per settled element. status: c completed, f failed, s skipped, n not started,
-- u undone (was c); claim: the element its settlement dispatched next, or -1 (answered again to
-- a repeated settlement). A pending element has no row.
CREATE TABLE ${n.fanOutElements} (
  map_id text COLLATE "C" NOT NULL REFERENCES ${n.fanOutLedgers} (map_id) ON DELETE CASCADE,
  idx    integer NOT NULL,
  status "char" NOT NULL,
  claim  integer NOT NULL,
  PRIMARY KEY (map_id, idx)
);
-- The rollback's turn is the highest completed element: found from this index.
CREATE INDEX fanout_elements_completed ON ${n.fanOutElements} (map_id, idx DESC) WHERE status = 'c';

-- fanout_open: create a map's ledger once, dispatching its first batch.
--   Arguments: p_map_id, p_total (>= 0), p_batch (>= 1), p_atomic (stop at the first failure),
--   p_ttl_ms (>= 1).
--   Results: next_index (elements dispatched so far) and created (true when this call created
--   it; an open of a live ledger changes nothing). Also deletes up to ${PRUNE_BATCH} expired ledgers.
--   Errors: 22023 RX_ARG when a number is out of range.
CREATE FUNCTION ${n.fanOutOpen}(p_map_id text, p_total integer, p_batch integer, p_atomic boolean,
  p_ttl_ms bigint, OUT next_index integer, OUT created boolean)
LANGUAGE plpgsql AS $fn$
BEGIN
  IF p_total IS NULL OR p_total < 0 OR p_batch IS NULL OR p_batch < 1 OR p_ttl_ms IS NULL OR p_ttl_ms < 1 THEN
    RAISE EXCEPTION 'RX_ARG fanout_open: total >= 0, batch size >= 1 and ttl >= 1 are required'
      USING ERRCODE = '22023';
  END IF;
  DELETE FROM ${n.fanOutLedgers} AS l WHERE l.map_id IN (
    SELECT d.map_id FROM ${n.fanOutLedgers} AS d
      WHERE d.expires_at <= now() LIMIT ${PRUNE_BATCH} FOR UPDATE SKIP LOCKED);
  DELETE FROM ${n.fanOutLedgers} AS l WHERE l.map_id = p_map_id AND l.expires_at <= now();
  INSERT INTO ${n.fanOutLedgers} AS l (map_id, total, batch, atomic, next_index, expires_at)
    VALUES (p_map_id, p_total, p_batch, coalesce(p_atomic, false), least(p_batch, p_total),
            now() + p_ttl_ms * interval '1 ms')
    ON CONFLICT (map_id) DO NOTHING
    RETURNING l.next_index INTO next_index;
  created := FOUND;
  IF NOT created THEN
    SELECT l.next_index INTO next_index FROM ${n.fanOutLedgers} AS l WHERE l.map_id = p_map_id;
  END IF;
END
$fn$;

-- fanout_settle: record how one element settled (once) and claim the next element to dispatch.
--   Arguments: p_map_id, p_index, p_status ('c' completed, 'f' failed, 's' skipped, 'n' not
--   started), p_ttl_ms (>= 1).
--   Results: counted (false when this index had settled before: nothing counted again), claim (the
--   element to dispatch next, -1 for none; the same answer on a repeat), done (every dispatched
--   element settled and nothing more will be dispatched), wake_job (NULL when none), rolling_back
--   (the map is being rolled back: a settlement then claims nothing).
--   Errors: P0002 RX_FANOUT_UNKNOWN when the ledger does not exist or the index is out of range;
--   22023 RX_ARG for another status or a ttl < 1.
CREATE FUNCTION ${n.fanOutSettle}(p_map_id text, p_index integer, p_status "char", p_ttl_ms bigint,
  OUT counted boolean, OUT claim integer, OUT done boolean, OUT wake_job text, OUT rolling_back boolean)
LANGUAGE plpgsql AS $fn$
DECLARE
  v ${n.fanOutLedgers};
BEGIN
  IF p_status IS NULL OR p_status NOT IN ('c', 'f', 's', 'n') OR p_ttl_ms IS NULL OR p_ttl_ms < 1 THEN
    RAISE EXCEPTION 'RX_ARG fanout_settle: status c, f, s or n and ttl >= 1 are required' USING ERRCODE = '22023';
  END IF;
  SELECT * INTO v FROM ${n.fanOutLedgers} AS l WHERE l.map_id = p_map_id AND l.expires_at > now() FOR UPDATE;
  IF NOT FOUND OR p_index IS NULL OR p_index < 0 OR p_index >= v.total THEN
    RAISE EXCEPTION 'RX_FANOUT_UNKNOWN fanout_settle: no ledger, or no such element' USING ERRCODE = 'P0002';
  END IF;
  wake_job := v.wake_job;
  rolling_back := v.phase = 'rollback';
  SELECT e.claim INTO claim FROM ${n.fanOutElements} AS e WHERE e.map_id = p_map_id AND e.idx = p_index;
  counted := NOT FOUND;
  IF counted THEN
    v.settled := v.settled + 1;
    IF p_status = 'f' THEN
      v.failed := v.failed + 1;
      v.stopped := v.stopped OR v.atomic;
    END IF;
    claim := -1;
    IF NOT v.stopped AND NOT rolling_back AND v.next_index < v.total THEN
      claim := v.next_index;
      v.next_index := v.next_index + 1;
    END IF;
    INSERT INTO ${n.fanOutElements} (map_id, idx, status, claim) VALUES (p_map_id, p_index, p_status, claim);
    UPDATE ${n.fanOutLedgers} AS l
      SET settled = v.settled, failed = v.failed, stopped = v.stopped, next_index = v.next_index,
          expires_at = now() + p_ttl_ms * interval '1 ms'
      WHERE l.map_id = p_map_id;
  END IF;
  done := v.settled = v.next_index AND (v.stopped OR v.next_index = v.total);
END
$fn$;

-- fanout_view: a ledger as of now (read only; register's answer and the snapshot).
--   Arguments: p_map_id.
--   Results: no row when there is no live ledger; else total, next_index, settled, failed,
--   stopped, phase, wake_job, and codes: one character per element, its status code or '.'
--   while pending.
--   Errors: none.
CREATE FUNCTION ${n.fanOutView}(p_map_id text)
RETURNS TABLE (total integer, next_index integer, settled integer, failed integer, stopped boolean,
  phase text, wake_job text, codes text)
LANGUAGE sql STABLE AS $fn$
  SELECT l.total, l.next_index, l.settled, l.failed, l.stopped, l.phase, l.wake_job,
    coalesce((SELECT string_agg(coalesce(e.status::text, '.'), '' ORDER BY g.i)
              FROM generate_series(0, l.total - 1) AS g(i)
              LEFT JOIN ${n.fanOutElements} AS e ON e.map_id = l.map_id AND e.idx = g.i), '')
  FROM ${n.fanOutLedgers} AS l
  WHERE l.map_id = p_map_id AND l.expires_at > now()
$fn$;

-- fanout_register: register the parent's wake job and, with phase 'rollback', start the rollback
-- (the phase never goes back).
--   Arguments: p_map_id, p_wake_job ('' = none), p_phase ('collect' or 'rollback'), p_ttl_ms (>= 1).
--   Results: the ledger after the registration, as fanout_view.
--   Errors: P0002 RX_FANOUT_UNKNOWN when the ledger does not exist; 22023 RX_ARG for another
--   phase or a ttl < 1.
CREATE FUNCTION ${n.fanOutRegister}(p_map_id text, p_wake_job text, p_phase text, p_ttl_ms bigint)
RETURNS TABLE (total integer, next_index integer, settled integer, failed integer, stopped boolean,
  phase text, wake_job text, codes text)
LANGUAGE plpgsql AS $fn$
BEGIN
  IF p_phase IS NULL OR p_phase NOT IN ('collect', 'rollback') OR p_ttl_ms IS NULL OR p_ttl_ms < 1 THEN
    RAISE EXCEPTION 'RX_ARG fanout_register: phase collect or rollback and ttl >= 1 are required'
      USING ERRCODE = '22023';
  END IF;
  UPDATE ${n.fanOutLedgers} AS l
    SET wake_job = nullif(p_wake_job, ''),
        phase = CASE WHEN p_phase = 'rollback' THEN 'rollback' ELSE l.phase END,
        expires_at = now() + p_ttl_ms * interval '1 ms'
    WHERE l.map_id = p_map_id AND l.expires_at > now();
  IF NOT FOUND THEN
    RAISE EXCEPTION 'RX_FANOUT_UNKNOWN fanout_register: no ledger' USING ERRCODE = 'P0002';
  END IF;
  RETURN QUERY SELECT * FROM ${n.fanOutView}(p_map_id);
END
$fn$;

-- fanout_undone: mark a completed element undone (once) and find the next one to undo.
--   Arguments: p_map_id, p_index, p_ttl_ms (>= 1).
--   Results: target (the highest completed element left, -1 when none: the rollback is over) and
--   wake_job (NULL when none). Marking again changes nothing and answers the same target.
--   Errors: P0002 RX_FANOUT_UNKNOWN when the ledger does not exist or the index is out of range;
--   22023 RX_ARG for a ttl < 1.
CREATE FUNCTION ${n.fanOutUndone}(p_map_id text, p_index integer, p_ttl_ms bigint,
  OUT target integer, OUT wake_job text)
LANGUAGE plpgsql AS $fn$
DECLARE
  v ${n.fanOutLedgers};
BEGIN
  IF p_ttl_ms IS NULL OR p_ttl_ms < 1 THEN
    RAISE EXCEPTION 'RX_ARG fanout_undone: ttl >= 1 is required' USING ERRCODE = '22023';
  END IF;
  SELECT * INTO v FROM ${n.fanOutLedgers} AS l WHERE l.map_id = p_map_id AND l.expires_at > now() FOR UPDATE;
  IF NOT FOUND OR p_index IS NULL OR p_index < 0 OR p_index >= v.total THEN
    RAISE EXCEPTION 'RX_FANOUT_UNKNOWN fanout_undone: no ledger, or no such element' USING ERRCODE = 'P0002';
  END IF;
  UPDATE ${n.fanOutElements} AS e SET status = 'u' WHERE e.map_id = p_map_id AND e.idx = p_index AND e.status = 'c';
  IF FOUND THEN
    UPDATE ${n.fanOutLedgers} AS l SET expires_at = now() + p_ttl_ms * interval '1 ms' WHERE l.map_id = p_map_id;
  END IF;
  SELECT coalesce(max(e.idx), -1) INTO target FROM ${n.fanOutElements} AS e
    WHERE e.map_id = p_map_id AND e.status = 'c';
  wake_job := v.wake_job;
END
$fn$;
`,
};
