/**
 * Migration 8, `lock-fast-path`: the exclusive lock's transitions in fewer statements and rows
 * touched, and a release that notifies only a key someone waits for (docs/decisions/139).
 *
 * - `coord_lock_acquire` takes a free key in one statement (an `UPDATE` of its kept row, or an
 *   `INSERT` of a new one); only a held key is read, for a re-entry or a refusal.
 * - A refusal marks the key wanted (`wanted_until`, 60 s ahead, written again only once less than
 *   30 s are left), and `coord_lock_want` marks a held key for a waiter that was not refused;
 *   `coord_lock_release` notifies `lock:<key>` only while the key is wanted, and takes a fenced
 *   key's outermost level in one statement.
 * - An unfenced key's release keeps the row while it is wanted, and `coord_purge` deletes a lock
 *   row only once no mark is left, so the mark outlives the holds it was made under.
 * - The index on `coord_locks.expires_at` is dropped: nothing reads by it, and without it a
 *   transition changes no indexed column (a heap-only update).
 *
 * Signatures and results are those of migration 2; `job_enter` and `job_leave` (migration 3) call
 * the new bodies.
 *
 * @module
 */
import type { CoordinationFunction } from '../names.js';
import type { Migration } from './migration.js';

/** The `lock-fast-path` migration. */
export const lockFastPathMigration: Migration = {
  version: 8,
  name: 'lock-fast-path',
  sql: (n) => {
    const f = (name: CoordinationFunction): string => n.coordFunction(name);
    return `
-- A key is wanted while wanted_until is ahead of the clock: a try was refused, or a waiter asked
-- to be told (coord_lock_want). Only then does a release notify.
ALTER TABLE ${n.coordLocks} ADD COLUMN wanted_until timestamptz;
DROP INDEX ${n.schema}.coord_locks_expires_at;

-- coord_lock_acquire: take the lock for an owner, or re-enter it.
--   Arguments: p_key, p_owner (root execution id), p_execution_id, p_reactor, p_step ('' or NULL
--   when absent), p_ttl_ms (integer >= 1), p_unfenced (the hold never uses its token).
--   Results: acquired; when acquired, token (decimal text) and nesting; when refused, the holder
--   (holder_owner, holder_execution_id, holder_reactor, holder_step) and ttl_ms left (>= 1).
--   A re-entry returns the outer token and never shortens the lease. A new hold's token is
--   greatest(last token + 1, clock µs). A refusal marks the key wanted for 60 s (written only
--   when less than 30 s of the mark are left, so a waiter's retries mostly stay read-only).
--   The clock is read before the statement that takes a free key: when that statement waits for
--   the row's lock, the lease is shorter by the wait and an expiry is judged as of the earlier
--   time, both on the safe side.
--   Errors: 22023 RX_ARG when p_ttl_ms < 1.
CREATE OR REPLACE FUNCTION ${f('lock_acquire')}(
  p_key text, p_owner text, p_execution_id text, p_reactor text, p_step text, p_ttl_ms bigint, p_unfenced boolean,
  OUT acquired boolean, OUT token text, OUT nesting integer,
  OUT holder_owner text, OUT holder_execution_id text, OUT holder_reactor text, OUT holder_step text,
  OUT ttl_ms bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_row ${n.coordLocks};
  v_now timestamptz;
  v_token bigint;
BEGIN
  IF p_ttl_ms IS NULL OR p_ttl_ms < 1 THEN
    RAISE EXCEPTION 'RX_ARG coord_lock_acquire: ttl must be a positive integer' USING ERRCODE = '22023';
  END IF;
  -- Each turn sees what committed before it; a turn that finds the key changed under it looks again.
  LOOP
    v_now := clock_timestamp();
    -- A free key with a row (a fenced key keeps it): taken in one statement.
    UPDATE ${n.coordLocks} AS l
      SET owner = p_owner, execution_id = nullif(p_execution_id, ''), reactor = nullif(p_reactor, ''),
          step = nullif(p_step, ''), nesting = 1, token = greatest(l.token + 1, ${f('us')}(v_now)),
          fenced = NOT coalesce(p_unfenced, false), expires_at = v_now + p_ttl_ms * interval '1 ms'
      WHERE l.key = p_key AND (l.owner IS NULL OR l.expires_at <= v_now)
      RETURNING l.token INTO v_token;
    IF NOT FOUND THEN
      -- A key without a row: taken by inserting it.
      INSERT INTO ${n.coordLocks} AS l (key, owner, execution_id, reactor, step, nesting, token, fenced, expires_at)
        VALUES (p_key, p_owner, nullif(p_execution_id, ''), nullif(p_reactor, ''), nullif(p_step, ''), 1,
                ${f('us')}(v_now), NOT coalesce(p_unfenced, false), v_now + p_ttl_ms * interval '1 ms')
        ON CONFLICT (key) DO NOTHING
        RETURNING l.token INTO v_token;
    END IF;
    IF FOUND THEN
      acquired := true; token := v_token::text; nesting := 1;
      RETURN;
    END IF;
    -- Held (or changed since): read without a lock.
    SELECT * INTO v_row FROM ${n.coordLocks} AS l WHERE l.key = p_key;
    v_now := clock_timestamp();
    CONTINUE WHEN NOT FOUND OR v_row.owner IS NULL OR v_row.expires_at <= v_now;
    IF v_row.owner = p_owner THEN
      UPDATE ${n.coordLocks} AS l
        SET nesting = l.nesting + 1, expires_at = greatest(l.expires_at, v_now + p_ttl_ms * interval '1 ms')
        WHERE l.key = p_key AND l.owner = p_owner AND l.token = v_row.token AND l.expires_at > v_now
        RETURNING l.nesting INTO nesting;
      CONTINUE WHEN NOT FOUND;
      acquired := true; token := v_row.token::text;
      RETURN;
    END IF;
    -- Refused: marked wanted under the same hold, so its release notifies (a release that
    -- committed meanwhile leaves nothing to mark, and the key is looked at again).
    IF v_row.wanted_until IS NULL OR v_row.wanted_until < v_now + interval '30 s' THEN
      UPDATE ${n.coordLocks} AS l SET wanted_until = v_now + interval '60 s'
        WHERE l.key = p_key AND l.owner = v_row.owner AND l.token = v_row.token AND l.expires_at > v_now;
      CONTINUE WHEN NOT FOUND;
    END IF;
    acquired := false;
    holder_owner := v_row.owner; holder_execution_id := v_row.execution_id;
    holder_reactor := v_row.reactor; holder_step := v_row.step;
    ttl_ms := greatest(1, ${f('ms_until')}(v_row.expires_at, v_now));
    RETURN;
  END LOOP;
END
$$;

-- coord_lock_release: owner-checked release of one nesting level.
--   Arguments: p_key, p_owner.
--   Results: released (false when p_owner held no live hold: expired, taken over or free) and
--   nesting left; at 0 the key is free and, while it is wanted, 'lock:<key>' is notified. A
--   fenced key keeps its row (and last token); an unfenced one is deleted unless it is wanted.
--   Errors: none.
CREATE OR REPLACE FUNCTION ${f('lock_release')}(p_key text, p_owner text, OUT released boolean, OUT nesting integer)
LANGUAGE plpgsql AS $$
DECLARE
  v_row ${n.coordLocks};
  v_now timestamptz;
  v_wanted timestamptz;
BEGIN
  -- The outermost level of a fenced hold: freed in one statement.
  UPDATE ${n.coordLocks} AS l
    SET owner = NULL, execution_id = NULL, reactor = NULL, step = NULL, nesting = 0, expires_at = NULL
    WHERE l.key = p_key AND l.owner = p_owner AND l.nesting = 1 AND l.fenced AND l.expires_at > clock_timestamp()
    RETURNING l.wanted_until INTO v_wanted;
  IF FOUND THEN
    IF v_wanted > clock_timestamp() THEN
      PERFORM ${f('notify')}('lock', p_key);
    END IF;
    released := true; nesting := 0;
    RETURN;
  END IF;
  SELECT * INTO v_row FROM ${n.coordLocks} AS l WHERE l.key = p_key FOR UPDATE;
  v_now := clock_timestamp();
  IF NOT FOUND OR v_row.owner IS DISTINCT FROM p_owner OR v_row.expires_at <= v_now THEN
    released := false; nesting := 0;
    RETURN;
  END IF;
  released := true;
  IF v_row.nesting > 1 THEN
    UPDATE ${n.coordLocks} AS l SET nesting = l.nesting - 1 WHERE l.key = p_key;
    nesting := v_row.nesting - 1;
    RETURN;
  END IF;
  IF v_row.fenced OR v_row.wanted_until > v_now THEN
    UPDATE ${n.coordLocks} AS l
      SET owner = NULL, execution_id = NULL, reactor = NULL, step = NULL, nesting = 0, expires_at = NULL
      WHERE l.key = p_key;
  ELSE
    DELETE FROM ${n.coordLocks} AS l WHERE l.key = p_key;
  END IF;
  IF v_row.wanted_until > v_now THEN
    PERFORM ${f('notify')}('lock', p_key);
  END IF;
  nesting := 0;
END
$$;

-- coord_lock_want: marks a held key wanted for p_ms, so that its release notifies (a waiter that
-- was not refused: a refusal marks the key itself). A free key is not marked.
--   Arguments: p_key, p_ms (integer >= 1).
--   Results: true when the key is held (and now marked); false when it is free and has a row (it
--   was held: its release may have come before this mark); NULL when it has no row.
--   Errors: 22023 RX_ARG when p_ms < 1.
CREATE FUNCTION ${f('lock_want')}(p_key text, p_ms bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  v_now timestamptz;
BEGIN
  IF p_ms IS NULL OR p_ms < 1 THEN
    RAISE EXCEPTION 'RX_ARG coord_lock_want: ms must be a positive integer' USING ERRCODE = '22023';
  END IF;
  v_now := clock_timestamp();
  UPDATE ${n.coordLocks} AS l
    SET wanted_until = greatest(l.wanted_until, v_now + p_ms * interval '1 ms')
    WHERE l.key = p_key AND l.owner IS NOT NULL AND l.expires_at > v_now;
  IF FOUND THEN
    RETURN true;
  END IF;
  RETURN CASE WHEN EXISTS (SELECT 1 FROM ${n.coordLocks} AS l WHERE l.key = p_key) THEN false END;
END
$$;

-- coord_purge: as in migration 2, except that a lock row goes only once its key is no longer
-- wanted (its mark must outlive the holds it was made under).
CREATE OR REPLACE FUNCTION ${f('purge')}(p_limit integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  v_now timestamptz := clock_timestamp();
  v_total integer := 0;
  v_count integer;
  v_key text;
  v_period bigint;
BEGIN
  DELETE FROM ${n.coordLocks} AS l WHERE l.key IN (
    SELECT d.key FROM ${n.coordLocks} AS d
      WHERE (d.owner IS NULL OR d.expires_at <= v_now)
        AND (NOT d.fenced OR d.token < ${f('us')}(v_now - interval '1 day'))
        AND (d.wanted_until IS NULL OR d.wanted_until <= v_now)
      LIMIT p_limit FOR UPDATE SKIP LOCKED);
  GET DIAGNOSTICS v_count = ROW_COUNT; v_total := v_total + v_count;
  DELETE FROM ${n.coordSemaphoreLeases} AS l WHERE (l.key, l.owner) IN (
    SELECT d.key, d.owner FROM ${n.coordSemaphoreLeases} AS d
      WHERE d.expires_at <= v_now LIMIT p_limit FOR UPDATE SKIP LOCKED);
  GET DIAGNOSTICS v_count = ROW_COUNT; v_total := v_total + v_count;
  DELETE FROM ${n.coordSemaphores} AS s WHERE s.key IN (
    SELECT d.key FROM ${n.coordSemaphores} AS d
      WHERE NOT EXISTS (SELECT 1 FROM ${n.coordSemaphoreLeases} AS l WHERE l.key = d.key)
      LIMIT p_limit FOR UPDATE SKIP LOCKED);
  GET DIAGNOSTICS v_count = ROW_COUNT; v_total := v_total + v_count;
  -- A rate key is purged while its row is locked, so no take charges it meanwhile; its row (the
  -- longest window) goes only when a fresh snapshot sees no start left.
  FOR v_key, v_period IN SELECT r.key, r.period_ms FROM ${n.coordRates} AS r
      WHERE EXISTS (SELECT 1 FROM ${n.coordRateStarts} AS s
                    WHERE s.key = r.key AND s.at <= v_now - r.period_ms * interval '1 ms')
         OR NOT EXISTS (SELECT 1 FROM ${n.coordRateStarts} AS s WHERE s.key = r.key)
      LIMIT p_limit FOR UPDATE SKIP LOCKED LOOP
    DELETE FROM ${n.coordRateStarts} AS s WHERE s.key = v_key AND s.at <= v_now - v_period * interval '1 ms';
    GET DIAGNOSTICS v_count = ROW_COUNT; v_total := v_total + v_count;
    DELETE FROM ${n.coordRates} AS r WHERE r.key = v_key
      AND NOT EXISTS (SELECT 1 FROM ${n.coordRateStarts} AS s WHERE s.key = v_key);
    GET DIAGNOSTICS v_count = ROW_COUNT; v_total := v_total + v_count;
  END LOOP;
  DELETE FROM ${n.coordPeriods} AS p WHERE (p.key, p.bucket) IN (
    SELECT d.key, d.bucket FROM ${n.coordPeriods} AS d
      WHERE d.expires_at <= v_now LIMIT p_limit FOR UPDATE SKIP LOCKED);
  GET DIAGNOSTICS v_count = ROW_COUNT; v_total := v_total + v_count;
  RETURN v_total;
END
$$;
`;
  },
};
