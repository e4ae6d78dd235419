/**
 * Migration 2, `coordination`: the five coordination primitives of the Coordinator port as typed
 * tables, and one plpgsql function per transition, each with a header naming its arguments,
 * results and errors (docs/decisions/127).
 *
 * Every time is the database clock, `clock_timestamp()`, read once per call after the rows the
 * call works on are locked; callers never pass "now". A plain `SELECT * FROM fn(…)` outside a
 * transaction is one atomic transition and one round trip. Argument errors raise SQLSTATE 22023
 * with a message starting `RX_ARG`. A transition that may let a waiter in sends NOTIFY on the
 * schema's coordination channel with the payload `<kind>:<key>` (kind: `lock`, `semaphore`,
 * `ordered`), delivered at commit (docs/decisions/128).
 *
 * @module
 */
import type { CoordinationFunction } from '../names.js';
import type { Migration } from './migration.js';

/** The `coordination` migration. */
export const coordinationMigration: Migration = {
  version: 2,
  name: 'coordination',
  sql: (n) => {
    const f = (name: CoordinationFunction): string => n.coordFunction(name);
    // The argument check of a transition taking a ttl (22023, RX_ARG), indented as a statement.
    const positiveTtl = (fn: string): string =>
      `IF p_ttl_ms IS NULL OR p_ttl_ms < 1 THEN
    RAISE EXCEPTION 'RX_ARG ${fn}: ttl must be a positive integer' USING ERRCODE = '22023';
  END IF;`;
    // coord_lock_acquire's answer when another owner holds the key (v_row), indented as a statement.
    const lockRefused = `acquired := false;
    holder_owner := v_row.owner; holder_execution_id := v_row.execution_id;
    holder_reactor := v_row.reactor; holder_step := v_row.step;
    ttl_ms := greatest(1, ${f('ms_until')}(v_row.expires_at, v_now));
    RETURN;`;
    // An ordered lock's counters: the OUT parameters of the functions that answer them, and the read that fills them.
    const counters = `OUT epoch bigint, OUT issued integer, OUT last_completed integer, OUT in_flight integer,
  OUT first_failed integer`;
    const readCounters = `SELECT * INTO epoch, issued, last_completed, in_flight, first_failed FROM ${f('ordered_state')}(p_key);`;
    // An owner-checked lease refresh of the rows of a table (key, owner, expires_at); locked: which rows are locked first.
    const leaseExtend = (name: CoordinationFunction, table: string, locked: string): string =>
      `CREATE FUNCTION ${f(name)}(p_key text, p_owner text, p_ttl_ms bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  v_now timestamptz;
BEGIN
  ${positiveTtl(`coord_${name}`)}
  PERFORM 1 FROM ${table} AS l WHERE ${locked} FOR UPDATE;
  v_now := clock_timestamp();
  UPDATE ${table} AS l SET expires_at = v_now + p_ttl_ms * interval '1 ms'
    WHERE l.key = p_key AND l.owner = p_owner AND l.expires_at > v_now;
  RETURN FOUND;
END
$$;`;
    return `
-- ── Shared helpers ────────────────────────────────────────────────────────────────────────────

-- coord_ms_until: whole ms from p_now until p_at, rounded up, never below 0.
--   Arguments: p_at, p_now. Results: the ms. Errors: none.
CREATE FUNCTION ${f('ms_until')}(p_at timestamptz, p_now timestamptz) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
  SELECT greatest(0, ceil(extract(epoch FROM (p_at - p_now)) * 1000))::bigint
$$;

-- coord_us: microseconds since the Unix epoch of p_at (the fencing-token floor).
--   Arguments: p_at. Results: the µs. Errors: none.
CREATE FUNCTION ${f('us')}(p_at timestamptz) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
  SELECT floor(extract(epoch FROM p_at) * 1000000)::bigint
$$;

-- coord_ms: milliseconds since the Unix epoch of p_at (ordered-lock epochs, coord_time).
--   Arguments: p_at. Results: the ms. Errors: none.
CREATE FUNCTION ${f('ms')}(p_at timestamptz) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
  SELECT floor(extract(epoch FROM p_at) * 1000)::bigint
$$;

-- coord_time: the database clock.
--   Arguments: none. Results: ms since the Unix epoch. Errors: none.
CREATE FUNCTION ${f('time')}() RETURNS bigint
LANGUAGE sql VOLATILE AS $$
  SELECT ${f('ms')}(clock_timestamp())
$$;

-- coord_notify: tells the listening processes that key p_key of kind p_kind changed: NOTIFY on
-- the schema's coordination channel with the payload '<kind>:<key>', sent at commit. A payload
-- too long for NOTIFY (8,000 bytes) is not sent: its waiters learn of the change at their poll.
--   Arguments: p_kind ('lock', 'semaphore', 'ordered'), p_key. Results: none. Errors: none.
CREATE FUNCTION ${f('notify')}(p_kind text, p_key text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF octet_length(p_kind) + 1 + octet_length(p_key) < 8000 THEN
    PERFORM pg_notify('${n.coordChannel}', p_kind || ':' || p_key);
  END IF;
END
$$;

-- ── Exclusive lock ────────────────────────────────────────────────────────────────────────────

-- One row per key. Held while owner IS NOT NULL and expires_at > now. 'token' is the current
-- hold's fencing token, or the last one handed out when free: the row outlives a fenced hold (a
-- day, see coord_purge) so tokens keep increasing per key, also across a server restart.
CREATE TABLE ${n.coordLocks} (
  key          text COLLATE "C" PRIMARY KEY,
  owner        text,
  execution_id text,
  reactor      text,
  step         text,
  nesting      integer NOT NULL DEFAULT 0,
  token        bigint NOT NULL DEFAULT 0,
  -- false: the hold never uses its token (a liveness lease); its release deletes the row.
  fenced       boolean NOT NULL DEFAULT true,
  expires_at   timestamptz
);
CREATE INDEX coord_locks_expires_at ON ${n.coordLocks} (expires_at);

-- coord_lock_acquire: take the lock for an owner, or re-enter it.
--   Arguments: p_key, p_owner (root execution id), p_execution_id, p_reactor, p_step ('' or NULL
--   when absent), p_ttl_ms (integer >= 1), p_unfenced (the hold never uses its token).
--   Results: acquired; when acquired, token (decimal text) and nesting; when refused, the holder
--   (holder_owner, holder_execution_id, holder_reactor, holder_step) and ttl_ms left (>= 1).
--   A re-entry returns the outer token and never shortens the lease. A new hold's token is
--   greatest(last token + 1, clock µs).
--   Errors: 22023 RX_ARG when p_ttl_ms < 1.
CREATE FUNCTION ${f('lock_acquire')}(
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
  ${positiveTtl('coord_lock_acquire')}
  -- A key held by another owner is refused without a lock or a write (a waiter's retries stay
  -- read-only); a release committing meanwhile is simply not seen yet.
  SELECT * INTO v_row FROM ${n.coordLocks} AS l WHERE l.key = p_key;
  v_now := clock_timestamp();
  IF FOUND AND v_row.owner IS DISTINCT FROM p_owner AND v_row.expires_at > v_now THEN
    ${lockRefused}
  END IF;
  INSERT INTO ${n.coordLocks} AS l (key) VALUES (p_key)
    ON CONFLICT (key) DO UPDATE SET key = l.key
    RETURNING * INTO v_row;
  v_now := clock_timestamp();
  IF v_row.owner IS NOT NULL AND v_row.expires_at > v_now THEN
    IF v_row.owner = p_owner THEN
      UPDATE ${n.coordLocks} AS l
        SET nesting = l.nesting + 1, expires_at = greatest(l.expires_at, v_now + p_ttl_ms * interval '1 ms')
        WHERE l.key = p_key;
      acquired := true; token := v_row.token::text; nesting := v_row.nesting + 1;
      RETURN;
    END IF;
    ${lockRefused}
  END IF;
  v_token := greatest(v_row.token + 1, ${f('us')}(v_now));
  UPDATE ${n.coordLocks} AS l
    SET owner = p_owner, execution_id = nullif(p_execution_id, ''), reactor = nullif(p_reactor, ''),
        step = nullif(p_step, ''), nesting = 1, token = v_token, fenced = NOT coalesce(p_unfenced, false),
        expires_at = v_now + p_ttl_ms * interval '1 ms'
    WHERE l.key = p_key;
  acquired := true; token := v_token::text; nesting := 1;
END
$$;

-- coord_lock_release: owner-checked release of one nesting level.
--   Arguments: p_key, p_owner.
--   Results: released (false when p_owner held no live hold: expired, taken over or free) and
--   nesting left; at 0 the key is free and 'lock:<key>' is notified. A fenced key keeps its row
--   (and last token); an unfenced one is deleted.
--   Errors: none.
CREATE FUNCTION ${f('lock_release')}(p_key text, p_owner text, OUT released boolean, OUT nesting integer)
LANGUAGE plpgsql AS $$
DECLARE
  v_row ${n.coordLocks};
  v_now timestamptz;
BEGIN
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
  IF v_row.fenced THEN
    UPDATE ${n.coordLocks} AS l
      SET owner = NULL, execution_id = NULL, reactor = NULL, step = NULL, nesting = 0, expires_at = NULL
      WHERE l.key = p_key;
  ELSE
    DELETE FROM ${n.coordLocks} AS l WHERE l.key = p_key;
  END IF;
  PERFORM ${f('notify')}('lock', p_key);
  nesting := 0;
END
$$;

-- coord_lock_extend: owner-checked lease refresh.
--   Arguments: p_key, p_owner, p_ttl_ms (integer >= 1): the new remaining lease.
--   Results: true when extended, false when p_owner holds no live hold.
--   Errors: 22023 RX_ARG when p_ttl_ms < 1.
${leaseExtend('lock_extend', n.coordLocks, 'l.key = p_key')}

-- coord_lock_state: the live hold of a key (read only).
--   Arguments: p_key.
--   Results: no row when free; else owner, execution_id, reactor, step, nesting, token (text), ttl_ms.
--   Errors: none.
CREATE FUNCTION ${f('lock_state')}(p_key text)
RETURNS TABLE (owner text, execution_id text, reactor text, step text, nesting integer, token text, ttl_ms bigint)
LANGUAGE sql VOLATILE AS $$
  SELECT l.owner, l.execution_id, l.reactor, l.step, l.nesting, l.token::text,
         greatest(1, ${f('ms_until')}(l.expires_at, n.now))
  FROM ${n.coordLocks} AS l, (SELECT clock_timestamp() AS now) AS n
  WHERE l.key = p_key AND l.owner IS NOT NULL AND l.expires_at > n.now
$$;

-- ── Semaphore (leases) ────────────────────────────────────────────────────────────────────────

-- One row per key: the limit of the latest acquire. Acquires and releases lock it, so counting
-- and taking a slot is one serialised step per key.
CREATE TABLE ${n.coordSemaphores} (
  key   text COLLATE "C" PRIMARY KEY,
  lim   integer NOT NULL
);

-- One row per holder of a slot; live while expires_at > now.
CREATE TABLE ${n.coordSemaphoreLeases} (
  key        text COLLATE "C" NOT NULL,
  owner      text NOT NULL,
  holder     jsonb NOT NULL,
  nesting    integer NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (key, owner)
);
CREATE INDEX coord_semaphore_leases_expires_at ON ${n.coordSemaphoreLeases} (expires_at);

-- coord_semaphore_acquire: take (or re-enter) a leased slot when fewer than p_limit are live.
--   Arguments: p_key, p_owner, p_holder (holder info JSON, kept for views), p_limit (integer >= 0,
--   takes effect at once), p_ttl_ms (integer >= 1).
--   Results: acquired, nesting, holders (live leases after the call); when refused also lim and
--   retry_after_ms (until the earliest lease ends; 0 when no lease exists).
--   Expired leases are dropped first, so a dead holder's slot returns; a re-entry keeps one slot
--   and never shortens its lease.
--   Errors: 22023 RX_ARG when p_limit < 0 or p_ttl_ms < 1.
CREATE FUNCTION ${f('semaphore_acquire')}(
  p_key text, p_owner text, p_holder jsonb, p_limit integer, p_ttl_ms bigint,
  OUT acquired boolean, OUT nesting integer, OUT holders integer, OUT lim integer, OUT retry_after_ms bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_now timestamptz;
  v_nesting integer;
  v_count integer;
  v_earliest timestamptz;
BEGIN
  IF p_limit IS NULL OR p_limit < 0 OR p_ttl_ms IS NULL OR p_ttl_ms < 1 THEN
    RAISE EXCEPTION 'RX_ARG coord_semaphore_acquire: limit must be an integer >= 0 and ttl a positive integer'
      USING ERRCODE = '22023';
  END IF;
  INSERT INTO ${n.coordSemaphores} AS s (key, lim) VALUES (p_key, p_limit)
    ON CONFLICT (key) DO UPDATE SET lim = excluded.lim;
  v_now := clock_timestamp();
  DELETE FROM ${n.coordSemaphoreLeases} AS l WHERE l.key = p_key AND l.expires_at <= v_now;
  UPDATE ${n.coordSemaphoreLeases} AS l
    SET nesting = l.nesting + 1, expires_at = greatest(l.expires_at, v_now + p_ttl_ms * interval '1 ms')
    WHERE l.key = p_key AND l.owner = p_owner
    RETURNING l.nesting INTO v_nesting;
  SELECT count(*), min(l.expires_at) INTO v_count, v_earliest
    FROM ${n.coordSemaphoreLeases} AS l WHERE l.key = p_key;
  IF v_nesting IS NOT NULL THEN
    acquired := true; nesting := v_nesting; holders := v_count;
    RETURN;
  END IF;
  IF v_count >= p_limit THEN
    acquired := false; holders := v_count; lim := p_limit;
    retry_after_ms := CASE WHEN v_earliest IS NULL THEN 0
                           ELSE greatest(1, ${f('ms_until')}(v_earliest, v_now)) END;
    RETURN;
  END IF;
  INSERT INTO ${n.coordSemaphoreLeases} (key, owner, holder, nesting, expires_at)
    VALUES (p_key, p_owner, p_holder, 1, v_now + p_ttl_ms * interval '1 ms');
  acquired := true; nesting := 1; holders := v_count + 1;
END
$$;

-- coord_semaphore_release: owner-checked release of one nesting level; frees the slot at zero.
--   Arguments: p_key, p_owner.
--   Results: released (false when p_owner held no live lease: nothing changes, capacity never
--   inflates) and nesting left; at 0 'semaphore:<key>' is notified.
--   Errors: none.
CREATE FUNCTION ${f('semaphore_release')}(p_key text, p_owner text, OUT released boolean, OUT nesting integer)
LANGUAGE plpgsql AS $$
DECLARE
  v_now timestamptz;
  v_nesting integer;
BEGIN
  PERFORM 1 FROM ${n.coordSemaphores} AS s WHERE s.key = p_key FOR UPDATE;
  v_now := clock_timestamp();
  SELECT l.nesting INTO v_nesting FROM ${n.coordSemaphoreLeases} AS l
    WHERE l.key = p_key AND l.owner = p_owner AND l.expires_at > v_now FOR UPDATE;
  IF v_nesting IS NULL THEN
    released := false; nesting := 0;
    RETURN;
  END IF;
  released := true;
  IF v_nesting > 1 THEN
    UPDATE ${n.coordSemaphoreLeases} AS l SET nesting = l.nesting - 1
      WHERE l.key = p_key AND l.owner = p_owner;
    nesting := v_nesting - 1;
    RETURN;
  END IF;
  DELETE FROM ${n.coordSemaphoreLeases} AS l WHERE l.key = p_key AND l.owner = p_owner;
  PERFORM ${f('notify')}('semaphore', p_key);
  nesting := 0;
END
$$;

-- coord_semaphore_extend: owner-checked lease refresh; an expired lease is never resurrected.
--   Arguments: p_key, p_owner, p_ttl_ms (integer >= 1): the new remaining lease.
--   Results: true when extended, false when p_owner holds no live lease.
--   Errors: 22023 RX_ARG when p_ttl_ms < 1.
${leaseExtend('semaphore_extend', n.coordSemaphoreLeases, 'l.key = p_key AND l.owner = p_owner')}

-- coord_semaphore_state: the live leases of a semaphore (read only).
--   Arguments: p_key.
--   Results: lim (the latest acquire's limit, NULL when unknown) and leases, a JSON array of
--   {owner, holder, nesting, ttl_ms} ordered by owner.
--   Errors: none.
CREATE FUNCTION ${f('semaphore_state')}(p_key text, OUT lim integer, OUT leases jsonb)
LANGUAGE plpgsql AS $$
DECLARE
  v_now timestamptz := clock_timestamp();
BEGIN
  SELECT s.lim INTO lim FROM ${n.coordSemaphores} AS s WHERE s.key = p_key;
  SELECT coalesce(jsonb_agg(jsonb_build_object('owner', l.owner, 'holder', l.holder, 'nesting', l.nesting,
                                               'ttl_ms', greatest(1, ${f('ms_until')}(l.expires_at, v_now)))
                            ORDER BY l.owner), '[]'::jsonb)
    INTO leases
    FROM ${n.coordSemaphoreLeases} AS l WHERE l.key = p_key AND l.expires_at > v_now;
END
$$;

-- ── Rate limit (exact sliding log) ────────────────────────────────────────────────────────────

-- One row per key: the longest window it was used with (starts older than it are dead). Takes
-- lock these rows, in key order, so several windows are checked and charged as one step.
CREATE TABLE ${n.coordRates} (
  key       text COLLATE "C" PRIMARY KEY,
  period_ms bigint NOT NULL
);

-- One row per start charged to a key; several windows on one key are views of the same log.
CREATE TABLE ${n.coordRateStarts} (
  key text COLLATE "C" NOT NULL,
  id  text NOT NULL,
  at  timestamptz NOT NULL,
  PRIMARY KEY (key, id)
);
CREATE INDEX coord_rate_starts_key_at ON ${n.coordRateStarts} (key, at);

-- coord_rate_take: check every window and charge all of them, or none.
--   Arguments: p_id (unique id of the start), p_keys, p_limits (integers >= 0), p_periods (ms,
--   integers >= 1): one window per index, arrays of one length.
--   Results: allowed; charged (false when p_id was already inside one of the windows: nothing is
--   charged again); when refused, refused_index (1-based window), refused_count and
--   retry_after_ms (until that window's oldest start leaves it, >= 1).
--   A start at t leaves a window of p at t + p.
--   Errors: 22023 RX_ARG on arrays of different lengths or a bad limit or period.
CREATE FUNCTION ${f('rate_take')}(
  p_id text, p_keys text[], p_limits integer[], p_periods bigint[],
  OUT allowed boolean, OUT charged boolean, OUT refused_index integer, OUT refused_count integer,
  OUT retry_after_ms bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_now timestamptz;
  v_n integer := coalesce(array_length(p_keys, 1), 0);
  v_count integer;
  v_oldest timestamptz;
BEGIN
  IF coalesce(array_length(p_limits, 1), 0) <> v_n OR coalesce(array_length(p_periods, 1), 0) <> v_n
     OR EXISTS (SELECT 1 FROM unnest(p_limits, p_periods) AS w(lim, period)
                WHERE w.lim IS NULL OR w.lim < 0 OR w.period IS NULL OR w.period < 1) THEN
    RAISE EXCEPTION 'RX_ARG coord_rate_take: one limit (>= 0) and one period (>= 1) per key' USING ERRCODE = '22023';
  END IF;
  IF v_n = 0 THEN
    allowed := true; charged := true;
    RETURN;
  END IF;
  INSERT INTO ${n.coordRates} AS r (key, period_ms)
    SELECT w.key, max(w.period) FROM unnest(p_keys, p_periods) AS w(key, period) GROUP BY w.key ORDER BY w.key
    ON CONFLICT (key) DO UPDATE SET period_ms = greatest(r.period_ms, excluded.period_ms);
  v_now := clock_timestamp();
  DELETE FROM ${n.coordRateStarts} AS s USING ${n.coordRates} AS r
    WHERE s.key = r.key AND r.key = ANY (p_keys) AND s.at <= v_now - r.period_ms * interval '1 ms';
  IF EXISTS (SELECT 1 FROM unnest(p_keys, p_periods) AS w(key, period)
             JOIN ${n.coordRateStarts} AS s ON s.key = w.key AND s.id = p_id
             WHERE s.at > v_now - w.period * interval '1 ms') THEN
    allowed := true; charged := false;
    RETURN;
  END IF;
  FOR i IN 1 .. v_n LOOP
    SELECT count(*), min(s.at) INTO v_count, v_oldest FROM ${n.coordRateStarts} AS s
      WHERE s.key = p_keys[i] AND s.at > v_now - p_periods[i] * interval '1 ms';
    IF v_count >= p_limits[i] THEN
      allowed := false; refused_index := i; refused_count := v_count;
      retry_after_ms := CASE WHEN v_oldest IS NULL THEN p_periods[i]
                             ELSE greatest(1, ${f('ms_until')}(v_oldest + p_periods[i] * interval '1 ms', v_now)) END;
      RETURN;
    END IF;
  END LOOP;
  INSERT INTO ${n.coordRateStarts} AS s (key, id, at)
    SELECT DISTINCT w.key, p_id, v_now FROM unnest(p_keys) AS w(key)
    ON CONFLICT (key, id) DO UPDATE SET at = excluded.at;
  allowed := true; charged := true;
END
$$;

-- coord_rate_refund: take the start p_id back out of the logs of p_keys.
--   Arguments: p_id, p_keys.
--   Results: the number of starts removed (0 for an id never charged).
--   Errors: none.
CREATE FUNCTION ${f('rate_refund')}(p_id text, p_keys text[]) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  v_removed integer;
BEGIN
  -- The keys' rows first, in key order (as a take locks them), then their starts.
  PERFORM 1 FROM ${n.coordRates} AS r WHERE r.key = ANY (p_keys) ORDER BY r.key FOR UPDATE;
  DELETE FROM ${n.coordRateStarts} AS s WHERE s.key = ANY (p_keys) AND s.id = p_id;
  GET DIAGNOSTICS v_removed = ROW_COUNT;
  RETURN v_removed;
END
$$;

-- coord_rate_state: the count of one sliding window (read only).
--   Arguments: p_key, p_period_ms (integer >= 1).
--   Results: count and reset_in_ms (until the oldest start leaves the window; 0 when empty).
--   Errors: 22023 RX_ARG when p_period_ms < 1.
CREATE FUNCTION ${f('rate_state')}(p_key text, p_period_ms bigint, OUT count integer, OUT reset_in_ms bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_now timestamptz := clock_timestamp();
  v_oldest timestamptz;
BEGIN
  IF p_period_ms IS NULL OR p_period_ms < 1 THEN
    RAISE EXCEPTION 'RX_ARG coord_rate_state: period must be a positive integer' USING ERRCODE = '22023';
  END IF;
  SELECT count(*), min(s.at) INTO count, v_oldest FROM ${n.coordRateStarts} AS s
    WHERE s.key = p_key AND s.at > v_now - p_period_ms * interval '1 ms';
  reset_in_ms := CASE WHEN v_oldest IS NULL THEN 0
                      ELSE ${f('ms_until')}(v_oldest + p_period_ms * interval '1 ms', v_now) END;
END
$$;

-- ── Period (once per bucket) ──────────────────────────────────────────────────────────────────

-- One row per marked bucket; marked while expires_at > now.
CREATE TABLE ${n.coordPeriods} (
  key        text COLLATE "C" NOT NULL,
  bucket     text NOT NULL,
  note       text,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (key, bucket)
);
CREATE INDEX coord_periods_expires_at ON ${n.coordPeriods} (expires_at);

-- coord_period_mark: mark a bucket once.
--   Arguments: p_key, p_bucket, p_ttl_ms (integer >= 1), p_note (NULL or '' = none).
--   Results: true when this call marked the bucket, false when it was marked already (the first
--   marker, its note and its expiry stay untouched).
--   Errors: 22023 RX_ARG when p_ttl_ms < 1.
CREATE FUNCTION ${f('period_mark')}(p_key text, p_bucket text, p_ttl_ms bigint, p_note text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  v_now timestamptz := clock_timestamp();
BEGIN
  ${positiveTtl('coord_period_mark')}
  INSERT INTO ${n.coordPeriods} AS p (key, bucket, note, expires_at)
    VALUES (p_key, p_bucket, nullif(p_note, ''), v_now + p_ttl_ms * interval '1 ms')
    ON CONFLICT (key, bucket) DO UPDATE SET note = excluded.note, expires_at = excluded.expires_at
      WHERE p.expires_at <= clock_timestamp();
  RETURN FOUND;
END
$$;

-- coord_period_state: a bucket's marker (read only).
--   Arguments: p_key, p_bucket.
--   Results: no row when unmarked; else ttl_ms (>= 0) and note (NULL when set without one).
--   Errors: none.
CREATE FUNCTION ${f('period_state')}(p_key text, p_bucket text)
RETURNS TABLE (ttl_ms bigint, note text)
LANGUAGE sql VOLATILE AS $$
  SELECT ${f('ms_until')}(p.expires_at, n.now), p.note
  FROM ${n.coordPeriods} AS p, (SELECT clock_timestamp() AS now) AS n
  WHERE p.key = p_key AND p.bucket = p_bucket AND p.expires_at > n.now
$$;

-- ── Ordered lock ──────────────────────────────────────────────────────────────────────────────

-- One row per key (never purged: its epoch is what makes an old batch's tickets stale). The
-- head is last_completed + 1. epoch is in ms of the database clock.
CREATE TABLE ${n.coordOrdered} (
  key            text COLLATE "C" PRIMARY KEY,
  epoch          bigint NOT NULL,
  issued         integer NOT NULL DEFAULT 0,
  last_completed integer NOT NULL DEFAULT 0,
  in_flight      integer,
  heartbeat_at   timestamptz,
  -- when the cursor last really advanced (or the batch started)
  advanced_at    timestamptz NOT NULL,
  first_failed   integer,
  holder         jsonb
);

-- Per outstanding position: its latest sign of life while not in flight (its ticket, then each
-- wait) and whether it completed out of turn (passed over when the head reaches it).
CREATE TABLE ${n.coordOrderedPositions} (
  key     text COLLATE "C" NOT NULL,
  nonce   integer NOT NULL,
  seen_at timestamptz,
  done    boolean NOT NULL DEFAULT false,
  CONSTRAINT coord_ordered_positions_pkey PRIMARY KEY (key, nonce)
);

-- coord_ordered_pass (internal, the caller holds the key's row lock): moves the cursor past the
-- head and past every position done out of turn behind it, and forgets those positions.
--   Arguments: p_key, p_last (the cursor before). Results: the new cursor. Errors: none.
CREATE FUNCTION ${f('ordered_pass')}(p_key text, p_last integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  v_last integer := p_last + 1;
BEGIN
  DELETE FROM ${n.coordOrderedPositions} AS o WHERE o.key = p_key AND o.nonce = v_last;
  LOOP
    DELETE FROM ${n.coordOrderedPositions} AS o WHERE o.key = p_key AND o.nonce = v_last + 1 AND o.done;
    EXIT WHEN NOT FOUND;
    v_last := v_last + 1;
  END LOOP;
  RETURN v_last;
END
$$;

-- coord_ordered_settle (internal, the caller holds the key's row lock): stores a moved cursor; a
-- cursor at the last issued position drains the key (epoch greatest(epoch + 1, now ms), counters
-- zero). Notifies 'ordered:<key>'.
--   Arguments: p_row (the key's row as locked), p_last (the new cursor), p_now, p_advanced (a
--   real advance, a completion or skip, which restarts the head's age; not a poison-pill pass).
--   Results: true when the key drained. Errors: none.
CREATE FUNCTION ${f('ordered_settle')}(
  p_row ${n.coordOrdered}, p_last integer, p_now timestamptz, p_advanced boolean) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM ${f('notify')}('ordered', p_row.key);
  IF p_last >= p_row.issued THEN
    DELETE FROM ${n.coordOrderedPositions} AS o WHERE o.key = p_row.key;
    UPDATE ${n.coordOrdered} AS o
      SET epoch = greatest(p_row.epoch + 1, ${f('ms')}(p_now)), issued = 0, last_completed = 0,
          in_flight = NULL, heartbeat_at = NULL, advanced_at = p_now, first_failed = NULL, holder = NULL
      WHERE o.key = p_row.key;
    RETURN true;
  END IF;
  UPDATE ${n.coordOrdered} AS o
    SET last_completed = p_last,
        advanced_at = CASE WHEN p_advanced THEN p_now ELSE o.advanced_at END,
        in_flight = CASE WHEN o.in_flight <= p_last THEN NULL ELSE o.in_flight END,
        heartbeat_at = CASE WHEN o.in_flight <= p_last THEN NULL ELSE o.heartbeat_at END,
        holder = CASE WHEN o.in_flight <= p_last THEN NULL ELSE o.holder END
    WHERE o.key = p_row.key;
  RETURN false;
END
$$;

-- coord_ordered_state: the counters of an ordered lock (read only; a key never seen reads zero).
--   Arguments: p_key.
--   Results: epoch, issued, last_completed, in_flight, first_failed (NULL = none).
--   Errors: none.
CREATE FUNCTION ${f('ordered_state')}(
  p_key text, ${counters})
LANGUAGE plpgsql AS $$
BEGIN
  SELECT o.epoch, o.issued, o.last_completed, o.in_flight, o.first_failed
    INTO epoch, issued, last_completed, in_flight, first_failed
    FROM ${n.coordOrdered} AS o WHERE o.key = p_key;
  IF NOT FOUND THEN
    epoch := 0; issued := 0; last_completed := 0;
  END IF;
END
$$;

-- coord_ordered_ticket: hand out the next position of the key's current epoch.
--   Arguments: p_key.
--   Results: nonce, epoch. A key seen for the first time starts at epoch = now (ms). The ticket is
--   the position's first sign of life; the first position of a fresh batch also restarts the
--   head's age.
--   Errors: none.
CREATE FUNCTION ${f('ordered_ticket')}(p_key text, OUT nonce integer, OUT epoch bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_row ${n.coordOrdered};
  v_now timestamptz := clock_timestamp();
BEGIN
  INSERT INTO ${n.coordOrdered} AS o (key, epoch, advanced_at) VALUES (p_key, ${f('ms')}(v_now), v_now)
    ON CONFLICT (key) DO UPDATE SET key = o.key
    RETURNING * INTO v_row;
  v_now := clock_timestamp();
  UPDATE ${n.coordOrdered} AS o
    SET issued = o.issued + 1,
        advanced_at = CASE WHEN o.issued = o.last_completed THEN v_now ELSE o.advanced_at END
    WHERE o.key = p_key;
  nonce := v_row.issued + 1; epoch := v_row.epoch;
  INSERT INTO ${n.coordOrderedPositions} AS p (key, nonce, seen_at) VALUES (p_key, v_row.issued + 1, v_now)
    ON CONFLICT ON CONSTRAINT coord_ordered_positions_pkey DO UPDATE SET seen_at = excluded.seen_at, done = false;
END
$$;

-- coord_ordered_enter: try to enter the ordered lock at a position (the head is last_completed + 1).
--   Arguments: p_key, p_nonce, p_epoch (the ticket's), p_poison_ms (integer >= 0: a head with no
--   sign of life for longer is passed over), p_strict, p_holder (holder info JSON).
--   Results: outcome 'entered' | 'wait' (head, poisoned_in_ms: when the head would be passed over
--   without a sign of life; NULL after 64 passes in one call) | 'chain_failed' (first_failed) |
--   'stale' (epoch: the current one) | 'passed'.
--   Sign of life of the head: its heartbeat when in flight, else the latest of its ticket or last
--   wait and the last real advance. Passing a dead head is not an advance, so a run of dead
--   positions is passed in one call (up to 64); a pass notifies 'ordered:<key>'. Entering twice
--   re-enters (refreshing the heartbeat); waiting refreshes the position's sign of life.
--   Errors: 22023 RX_ARG when p_poison_ms < 0 or p_nonce was never issued in this epoch.
CREATE FUNCTION ${f('ordered_enter')}(
  p_key text, p_nonce integer, p_epoch bigint, p_poison_ms bigint, p_strict boolean, p_holder jsonb,
  OUT outcome text, OUT head integer, OUT poisoned_in_ms bigint, OUT first_failed integer, OUT epoch bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_row ${n.coordOrdered};
  v_now timestamptz;
  v_last integer;
  v_head integer;
  v_moved boolean := false;
  v_alive timestamptz;
  v_seen timestamptz;
  v_elapsed numeric;
BEGIN
  IF p_poison_ms IS NULL OR p_poison_ms < 0 THEN
    RAISE EXCEPTION 'RX_ARG coord_ordered_enter: poison ms must be an integer >= 0' USING ERRCODE = '22023';
  END IF;
  SELECT * INTO v_row FROM ${n.coordOrdered} AS o WHERE o.key = p_key FOR UPDATE;
  v_now := clock_timestamp();
  IF coalesce(v_row.epoch, 0) <> p_epoch THEN
    outcome := 'stale'; epoch := coalesce(v_row.epoch, 0);
    RETURN;
  END IF;
  IF p_nonce IS NULL OR p_nonce < 1 OR p_nonce > coalesce(v_row.issued, 0) THEN
    RAISE EXCEPTION 'RX_ARG coord_ordered_enter: position % was never issued in epoch %', p_nonce, p_epoch
      USING ERRCODE = '22023';
  END IF;
  v_last := v_row.last_completed;
  FOR pass IN 1 .. 64 LOOP
    v_head := v_last + 1;
    IF p_nonce <= v_last THEN
      outcome := 'passed';
    ELSIF p_strict AND v_row.first_failed IS NOT NULL AND v_row.first_failed < p_nonce THEN
      outcome := 'chain_failed'; first_failed := v_row.first_failed;
    ELSIF p_nonce = v_head THEN
      outcome := 'entered';
    ELSE
      IF v_row.in_flight = v_head THEN
        v_alive := v_row.heartbeat_at;
      ELSE
        SELECT p.seen_at INTO v_seen FROM ${n.coordOrderedPositions} AS p
          WHERE p.key = p_key AND p.nonce = v_head;
        v_alive := greatest(v_row.advanced_at, v_seen);
      END IF;
      v_elapsed := extract(epoch FROM (v_now - v_alive)) * 1000;
      IF v_elapsed <= p_poison_ms THEN
        outcome := 'wait'; head := v_head; poisoned_in_ms := floor(p_poison_ms - v_elapsed)::bigint + 1;
      END IF;
    END IF;
    EXIT WHEN outcome IS NOT NULL;
    -- the poison pill: pass over the dead head and every position completed out of turn behind it
    v_last := ${f('ordered_pass')}(p_key, v_last);
    v_moved := true;
  END LOOP;
  IF outcome IS NULL THEN
    outcome := 'wait'; head := v_last + 1;
  END IF;
  IF v_moved AND ${f('ordered_settle')}(v_row, v_last, v_now, false) THEN
    outcome := 'passed'; head := NULL; poisoned_in_ms := NULL;
    RETURN;
  END IF;
  IF outcome = 'entered' THEN
    UPDATE ${n.coordOrdered} AS o SET in_flight = p_nonce, heartbeat_at = v_now, holder = p_holder
      WHERE o.key = p_key;
  ELSIF outcome = 'wait' THEN
    INSERT INTO ${n.coordOrderedPositions} AS p (key, nonce, seen_at) VALUES (p_key, p_nonce, v_now)
      ON CONFLICT (key, nonce) DO UPDATE SET seen_at = excluded.seen_at;
  END IF;
END
$$;

-- coord_ordered_heartbeat: liveness of the position in flight.
--   Arguments: p_key, p_nonce, p_epoch.
--   Results: true when recorded, false when this position is not the one in flight (another
--   epoch, passed over, or completed).
--   Errors: none.
CREATE FUNCTION ${f('ordered_heartbeat')}(p_key text, p_nonce integer, p_epoch bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE ${n.coordOrdered} AS o SET heartbeat_at = clock_timestamp()
    WHERE o.key = p_key AND o.epoch = p_epoch AND o.in_flight = p_nonce;
  RETURN FOUND;
END
$$;

-- coord_ordered_complete: a position reached a terminal result; advance past it when it is the head.
--   Arguments: p_key, p_nonce, p_epoch, p_failed, p_strict (a strict failure records first_failed,
--   the lowest one).
--   Results: the counters after the call, as coord_ordered_state.
--   A position completed out of turn is remembered (done) and passed over when the head reaches
--   it; reaching the last issued position drains the key (a new epoch fences the old tickets). A
--   stale epoch or a position already passed is a no-op. An advance notifies 'ordered:<key>'.
--   Errors: none.
CREATE FUNCTION ${f('ordered_complete')}(
  p_key text, p_nonce integer, p_epoch bigint, p_failed boolean, p_strict boolean,
  OUT epoch bigint, OUT issued integer, OUT last_completed integer, OUT in_flight integer, OUT first_failed integer)
LANGUAGE plpgsql AS $$
DECLARE
  v_row ${n.coordOrdered};
  v_now timestamptz;
BEGIN
  SELECT * INTO v_row FROM ${n.coordOrdered} AS o WHERE o.key = p_key FOR UPDATE;
  v_now := clock_timestamp();
  IF FOUND AND v_row.epoch = p_epoch AND p_nonce > v_row.last_completed AND p_nonce <= v_row.issued THEN
    IF p_failed AND p_strict AND (v_row.first_failed IS NULL OR p_nonce < v_row.first_failed) THEN
      UPDATE ${n.coordOrdered} AS o SET first_failed = p_nonce WHERE o.key = p_key;
    END IF;
    IF p_nonce <> v_row.last_completed + 1 THEN
      INSERT INTO ${n.coordOrderedPositions} AS p (key, nonce, done) VALUES (p_key, p_nonce, true)
        ON CONFLICT (key, nonce) DO UPDATE SET done = true;
    ELSE
      PERFORM ${f('ordered_settle')}(v_row, ${f('ordered_pass')}(p_key, v_row.last_completed),
                                              v_now, true);
    END IF;
  END IF;
  ${readCounters}
END
$$;

-- coord_ordered_skip: operator action; pass over the head position (in flight or not).
--   Arguments: p_key.
--   Results: the counters after the call, as coord_ordered_state.
--   Like a completion of the head (positions done out of turn behind it are passed too); drains
--   the key when nothing is left; a drained key is left alone.
--   Errors: none.
CREATE FUNCTION ${f('ordered_skip')}(
  p_key text, ${counters})
LANGUAGE plpgsql AS $$
DECLARE
  v_row ${n.coordOrdered};
  v_now timestamptz;
BEGIN
  SELECT * INTO v_row FROM ${n.coordOrdered} AS o WHERE o.key = p_key FOR UPDATE;
  v_now := clock_timestamp();
  IF FOUND AND v_row.last_completed < v_row.issued THEN
    PERFORM ${f('ordered_settle')}(v_row, ${f('ordered_pass')}(p_key, v_row.last_completed),
                                            v_now, true);
  END IF;
  ${readCounters}
END
$$;

-- coord_ordered_reset: operator action; a new epoch with fresh counters.
--   Arguments: p_key.
--   Results: the counters after the call (epoch greatest(old epoch + 1, now ms); the rest zero).
--   Outstanding tickets become stale. Notifies 'ordered:<key>'.
--   Errors: none.
CREATE FUNCTION ${f('ordered_reset')}(
  p_key text, ${counters})
LANGUAGE plpgsql AS $$
DECLARE
  v_now timestamptz := clock_timestamp();
BEGIN
  INSERT INTO ${n.coordOrdered} AS o (key, epoch, advanced_at) VALUES (p_key, ${f('ms')}(v_now), v_now)
    ON CONFLICT (key) DO UPDATE
      SET epoch = greatest(o.epoch + 1, ${f('ms')}(clock_timestamp())), issued = 0, last_completed = 0,
          in_flight = NULL, heartbeat_at = NULL, advanced_at = clock_timestamp(), first_failed = NULL, holder = NULL
    RETURNING o.epoch INTO epoch;
  DELETE FROM ${n.coordOrderedPositions} AS p WHERE p.key = p_key;
  PERFORM ${f('notify')}('ordered', p_key);
  issued := 0; last_completed := 0;
END
$$;

-- ── Upkeep ────────────────────────────────────────────────────────────────────────────────────

-- coord_purge: deletes dead coordination rows, at most p_limit per table. State is judged live by
-- its expiry on every call, so purging never changes what a caller sees. Dead: expired unfenced
-- locks; fenced locks free or expired whose last token is more than a day behind the clock;
-- expired semaphore leases and semaphores without leases; rate starts outside their key's
-- longest window and rate keys without starts; expired period markers. Ordered locks are kept
-- (their epoch fences old tickets). Rows another call has locked are skipped (SKIP LOCKED), so a
-- purge never waits for a transition and never deadlocks with one.
--   Arguments: p_limit (rows per table, >= 1).
--   Results: the number of rows deleted.
--   Errors: none.
CREATE FUNCTION ${f('purge')}(p_limit integer) RETURNS integer
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
