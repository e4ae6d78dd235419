/**
 * Migration 3, `job-leases`: the two moments of a worker's job that touch both the execution rows
 * and the coordinator's locks (the JobLeases port), each one plpgsql function, so one statement,
 * one transaction and one round trip (docs/decisions/130). No tables: they work on the tables of
 * migrations 1 and 2, through their functions (`save_execution`, `coord_lock_acquire`,
 * `coord_lock_release`), so a lease taken here is the coordinator's lock and a record written here
 * is the store's.
 *
 * A function that checks the lease locks the lock's row first (`FOR SHARE` or `FOR UPDATE`): an
 * acquirer taking over an expired lease waits for the write to commit, so a record is only ever
 * written under a live lease of its owner.
 *
 * @module
 */
import type { Migration } from './migration.js';

/** The parameters of `save_execution` (migration 1), in its order: the job functions pass them on. */
const SAVE_PARAMETERS = `p_id text, p_record json, p_reactor text, p_status text, p_version text, p_fingerprint text,
  p_root_id text, p_parent_id text, p_tags jsonb, p_idempotency_key text,
  p_created_ms float8, p_updated_ms float8, p_ttl_ms bigint,
  p_part_paths text[], p_part_revs bigint[], p_part_states json[]`;

/** The call of `save_execution` with the job functions' parameters (never "only if absent"). */
const saveCall = (fn: string): string =>
  `${fn}(p_id, p_record, p_reactor, p_status, p_version, p_fingerprint, p_root_id, p_parent_id, p_tags,
    p_idempotency_key, p_created_ms, p_updated_ms, p_ttl_ms, false, p_part_paths, p_part_revs, p_part_states)`;

/** The `job-leases` migration. */
export const jobLeasesMigration: Migration = {
  version: 3,
  name: 'job-leases',
  sql: (n) => `
-- job_enter: a worker takes up a job. Takes the execution's liveness lock exactly as
-- coord_lock_acquire does and, when it is taken, reads the execution's record (with its large
-- maps' element states) and whether the cancel marker is set, after the acquisition: whatever
-- the previous holder wrote before releasing is seen.
--   Arguments: p_key, p_owner, p_execution_id, p_reactor, p_step, p_ttl_ms, p_unfenced (as
--   coord_lock_acquire); p_record_id (the execution to read); p_cancel_key, p_cancel_bucket (the
--   cancel-request period marker).
--   Results: as coord_lock_acquire (acquired, token, nesting; or the holder and ttl_ms); when
--   acquired, also record_json (NULL: no live row), part_paths and part_states (the large maps'
--   states as JSON text, NULL when there are none), and cancel_requested. A refusal reads nothing.
--   Errors: 22023 RX_ARG when p_ttl_ms < 1 (from coord_lock_acquire).
CREATE FUNCTION ${n.jobEnter}(
  p_key text, p_owner text, p_execution_id text, p_reactor text, p_step text, p_ttl_ms bigint, p_unfenced boolean,
  p_record_id text, p_cancel_key text, p_cancel_bucket text,
  OUT acquired boolean, OUT token text, OUT nesting integer,
  OUT holder_owner text, OUT holder_execution_id text, OUT holder_reactor text, OUT holder_step text,
  OUT ttl_ms bigint, OUT record_json text, OUT part_paths text[], OUT part_states text[],
  OUT cancel_requested boolean)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_lock record;
BEGIN
  SELECT * INTO v_lock FROM ${n.coordFunction('lock_acquire')}(
    p_key, p_owner, p_execution_id, p_reactor, p_step, p_ttl_ms, p_unfenced) AS a;
  acquired := v_lock.acquired; token := v_lock.token; nesting := v_lock.nesting;
  holder_owner := v_lock.holder_owner; holder_execution_id := v_lock.holder_execution_id;
  holder_reactor := v_lock.holder_reactor; holder_step := v_lock.holder_step; ttl_ms := v_lock.ttl_ms;
  IF NOT acquired THEN
    RETURN;
  END IF;
  SELECT e.record::text INTO record_json FROM ${n.executions} AS e
    WHERE e.id = p_record_id AND (e.expires_at IS NULL OR e.expires_at > now());
  IF record_json IS NOT NULL THEN
    SELECT array_agg(m.path ORDER BY m.path), array_agg(m.states::text ORDER BY m.path)
      INTO part_paths, part_states
      FROM ${n.executionMapParts} AS m WHERE m.execution_id = p_record_id;
  END IF;
  cancel_requested := EXISTS (SELECT 1 FROM ${n.coordPeriods} AS p
    WHERE p.key = p_cancel_key AND p.bucket = p_cancel_bucket AND p.expires_at > clock_timestamp());
END
$fn$;

-- job_leave: a worker ends a job with a record write. While p_owner holds the lock p_key, saves
-- the record exactly as save_execution does, then releases one level of the lock exactly as
-- coord_lock_release does (notifying its waiters when it is free): the next holder always reads
-- this record, and an owner that lost the lock writes nothing.
--   Arguments: p_key, p_owner (the lock and its holder); then save_execution's arguments without
--   p_if_absent.
--   Results: outcome 1 (saved and released; nesting left, 0 = free), 2 (p_owner holds no live
--   hold but the stored record is exactly p_record: a resend after a lost reply; nothing done),
--   0 (p_owner holds no live hold: nothing written).
--   Errors: none of its own.
CREATE FUNCTION ${n.jobLeave}(p_key text, p_owner text, ${SAVE_PARAMETERS},
  OUT outcome integer, OUT nesting integer)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_release record;
BEGIN
  PERFORM 1 FROM ${n.coordLocks} AS l
    WHERE l.key = p_key AND l.owner = p_owner AND l.expires_at > clock_timestamp() FOR UPDATE;
  IF NOT FOUND THEN
    outcome := CASE WHEN EXISTS (SELECT 1 FROM ${n.executions} AS e
                                 WHERE e.id = p_id AND e.record::text = p_record::text) THEN 2 ELSE 0 END;
    nesting := 0;
    RETURN;
  END IF;
  PERFORM ${saveCall(n.saveExecution)};
  SELECT * INTO v_release FROM ${n.coordFunction('lock_release')}(p_key, p_owner) AS r;
  outcome := 1; nesting := v_release.nesting;
END
$fn$;

-- job_save_fenced: a worker's checkpoint. Saves the record exactly as save_execution does, only
-- while p_owner holds the lock p_key (the execution's liveness lease); the lease is kept.
--   Arguments: p_key, p_owner; then save_execution's arguments without p_if_absent.
--   Results: true when written, false when p_owner holds no live hold (nothing written).
--   Errors: none of its own.
CREATE FUNCTION ${n.jobSaveFenced}(p_key text, p_owner text, ${SAVE_PARAMETERS}) RETURNS boolean
LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM 1 FROM ${n.coordLocks} AS l
    WHERE l.key = p_key AND l.owner = p_owner AND l.expires_at > clock_timestamp() FOR SHARE;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  PERFORM ${saveCall(n.saveExecution)};
  RETURN true;
END
$fn$;
`,
};
