/**
 * Migration 1, `store`: the execution rows and the claims of the Store and InterruptClaims ports,
 * and one function per transition that needs more than one statement (each with a header naming
 * its arguments, result and errors). Times the store decides (expiries, `saved_at`) are the
 * database's clock (`now()`); the record's own times are the engine's clock, projected.
 *
 * @module
 */
import type { Migration } from './migration.js';

/** The statuses after which an execution does not change on its own (`TERMINAL_STATUSES`). */
const TERMINAL = `('completed', 'failed', 'halted', 'cancelled', 'aborted')`;

/** Engine-clock milliseconds (float8) as a timestamptz, exactly (interval arithmetic in microseconds). */
const ms = (value: string): string => `('epoch'::timestamptz + ${value} * interval '1 millisecond')`;

/** The `store` migration. */
export const storeMigration: Migration = {
  version: 1,
  name: 'store',
  sql: (n) => `
-- One row per execution. record: the record's JSON exactly as the engine wrote it (json keeps
-- the text: key order and every character); the other columns are projected from it at each
-- save, for filters, indexes and SQL readers. created_at / updated_at: the record's times
-- (engine clock); finished_at: when it first reached its current terminal status (engine clock);
-- saved_at: the database clock at the last save; expires_at: null unless a retention is set.
CREATE TABLE ${n.executions} (
  id                 text COLLATE "C" PRIMARY KEY,
  reactor            text NOT NULL,
  status             text NOT NULL,
  definition_version text,
  fingerprint        text,
  root_id            text NOT NULL,
  parent_id          text,
  tags               jsonb NOT NULL DEFAULT '{}'::jsonb,
  idempotency_key    text,
  created_at         timestamptz NOT NULL,
  updated_at         timestamptz NOT NULL,
  finished_at        timestamptz,
  saved_at           timestamptz NOT NULL DEFAULT now(),
  expires_at         timestamptz,
  record             json NOT NULL
);
CREATE INDEX executions_newest ON ${n.executions} (created_at DESC, id DESC);
CREATE INDEX executions_reactor_newest ON ${n.executions} (reactor, created_at DESC, id DESC);
CREATE INDEX executions_status_newest ON ${n.executions} (status, created_at DESC, id DESC);
CREATE INDEX executions_tags ON ${n.executions} USING gin (tags jsonb_path_ops);
CREATE INDEX executions_root ON ${n.executions} (root_id);
CREATE INDEX executions_parent ON ${n.executions} (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX executions_expiry ON ${n.executions} (expires_at) WHERE expires_at IS NOT NULL;

-- The element states of an execution's large maps (more than 1,000 elements), one row per map
-- path, written only when their revision moved; gone with their execution.
CREATE TABLE ${n.executionMapParts} (
  execution_id text COLLATE "C" NOT NULL REFERENCES ${n.executions} (id) ON DELETE CASCADE,
  path         text NOT NULL,
  rev          bigint NOT NULL,
  states       json NOT NULL,
  PRIMARY KEY (execution_id, path)
);

-- Idempotency claims: the execution that won (reactor, key). expires_at: null unless a retention is set.
CREATE TABLE ${n.idempotencyClaims} (
  reactor      text NOT NULL,
  key          text NOT NULL,
  execution_id text NOT NULL,
  claimed_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz,
  PRIMARY KEY (reactor, key)
);
CREATE INDEX idempotency_claims_expiry ON ${n.idempotencyClaims} (expires_at) WHERE expires_at IS NOT NULL;

-- Interrupt correlation ids: the execution paused on each.
CREATE TABLE ${n.correlationClaims} (
  correlation_id text PRIMARY KEY,
  execution_id   text NOT NULL,
  claimed_at     timestamptz NOT NULL DEFAULT now(),
  expires_at     timestamptz
);
CREATE INDEX correlation_claims_expiry ON ${n.correlationClaims} (expires_at) WHERE expires_at IS NOT NULL;

-- Interrupt resume claims: a short lease per (execution, step), held by one claimant.
CREATE TABLE ${n.resumeClaims} (
  execution_id text NOT NULL,
  step         text NOT NULL,
  claimant     text NOT NULL,
  expires_at   timestamptz NOT NULL,
  PRIMARY KEY (execution_id, step)
);
CREATE INDEX resume_claims_expiry ON ${n.resumeClaims} (expires_at);

-- save_execution: creates or replaces one execution's row, projecting its columns from the
-- arguments, and writes the element states of its large maps whose revision moved.
-- Arguments: p_id, p_record (the record's JSON), the projected values (p_reactor, p_status,
--   p_version, p_fingerprint, p_root_id, p_parent_id, p_tags, p_idempotency_key), p_created_ms and
--   p_updated_ms (engine clock, ms), p_ttl_ms (null: kept), p_if_absent (write only when no live
--   row exists: an idempotency claim's first record), and the map parts as three arrays of one
--   length (p_part_states null where the stored revision is current).
-- Returns: true when the row was written, false when p_if_absent found a live row.
-- Errors: none of its own. Time: expiry from the database clock.
CREATE FUNCTION ${n.saveExecution}(
  p_id text, p_record json, p_reactor text, p_status text, p_version text, p_fingerprint text,
  p_root_id text, p_parent_id text, p_tags jsonb, p_idempotency_key text,
  p_created_ms float8, p_updated_ms float8, p_ttl_ms bigint, p_if_absent boolean,
  p_part_paths text[], p_part_revs bigint[], p_part_states json[]
) RETURNS boolean LANGUAGE plpgsql AS $fn$
DECLARE
  v_updated timestamptz := ${ms('p_updated_ms')};
  v_terminal boolean := p_status IN ${TERMINAL};
BEGIN
  INSERT INTO ${n.executions} AS e (id, reactor, status, definition_version, fingerprint, root_id,
    parent_id, tags, idempotency_key, created_at, updated_at, finished_at, saved_at, expires_at, record)
  VALUES (p_id, p_reactor, p_status, p_version, p_fingerprint, p_root_id, p_parent_id,
    coalesce(p_tags, '{}'::jsonb), p_idempotency_key, ${ms('p_created_ms')}, v_updated,
    CASE WHEN v_terminal THEN v_updated END, now(),
    now() + p_ttl_ms * interval '1 millisecond', p_record)
  ON CONFLICT (id) DO UPDATE SET
    reactor = excluded.reactor, status = excluded.status,
    definition_version = excluded.definition_version, fingerprint = excluded.fingerprint,
    root_id = excluded.root_id, parent_id = excluded.parent_id, tags = excluded.tags,
    idempotency_key = excluded.idempotency_key, created_at = excluded.created_at,
    updated_at = excluded.updated_at,
    finished_at = CASE WHEN NOT v_terminal THEN NULL
                       WHEN e.status IN ${TERMINAL} THEN coalesce(e.finished_at, v_updated)
                       ELSE v_updated END,
    saved_at = excluded.saved_at, expires_at = excluded.expires_at, record = excluded.record
  WHERE NOT p_if_absent OR e.expires_at <= now();
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  IF p_part_paths IS NOT NULL THEN
    INSERT INTO ${n.executionMapParts} AS m (execution_id, path, rev, states)
    SELECT p_id, part.path, part.rev, part.states
    FROM unnest(p_part_paths, p_part_revs, p_part_states) AS part(path, rev, states)
    WHERE part.states IS NOT NULL
    ON CONFLICT (execution_id, path) DO UPDATE SET rev = excluded.rev, states = excluded.states;
  END IF;
  RETURN true;
END
$fn$;

-- claim_idempotency: claims (p_reactor, p_key) for p_execution_id unless another execution holds
-- it (an expired claim is taken over).
-- Arguments: p_reactor, p_key, p_execution_id, p_ttl_ms (null: the claim is kept).
-- Returns: the holder after the call (p_execution_id when claimed, or already held by it).
-- Errors: none of its own. Concurrency: a concurrent claim waits on the row until the winner's
-- transaction ends, then reads the winner.
CREATE FUNCTION ${n.claimIdempotency}(p_reactor text, p_key text, p_execution_id text, p_ttl_ms bigint)
RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
  v_holder text;
BEGIN
  LOOP
    INSERT INTO ${n.idempotencyClaims} AS c (reactor, key, execution_id, claimed_at, expires_at)
    VALUES (p_reactor, p_key, p_execution_id, now(), now() + p_ttl_ms * interval '1 millisecond')
    ON CONFLICT (reactor, key) DO UPDATE SET execution_id = excluded.execution_id,
      claimed_at = excluded.claimed_at, expires_at = excluded.expires_at
    WHERE c.expires_at <= now()
    RETURNING c.execution_id INTO v_holder;
    IF FOUND THEN
      RETURN v_holder;
    END IF;
    SELECT c.execution_id INTO v_holder FROM ${n.idempotencyClaims} AS c
    WHERE c.reactor = p_reactor AND c.key = p_key;
    IF FOUND THEN
      RETURN v_holder;
    END IF;
  END LOOP;
END
$fn$;

-- claim_correlation: claims p_correlation_id for p_execution_id when it is free, expired, held by
-- p_execution_id already, or held by p_replace (a stale claim taken over).
-- Arguments: p_correlation_id, p_execution_id, p_replace (null: none), p_ttl_ms (null: kept).
-- Returns: the holder after the call (p_execution_id when claimed).
-- Errors: none of its own.
CREATE FUNCTION ${n.claimCorrelation}(p_correlation_id text, p_execution_id text, p_replace text, p_ttl_ms bigint)
RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
  v_holder text;
BEGIN
  LOOP
    INSERT INTO ${n.correlationClaims} AS c (correlation_id, execution_id, claimed_at, expires_at)
    VALUES (p_correlation_id, p_execution_id, now(), now() + p_ttl_ms * interval '1 millisecond')
    ON CONFLICT (correlation_id) DO UPDATE SET execution_id = excluded.execution_id,
      claimed_at = excluded.claimed_at, expires_at = excluded.expires_at
    WHERE c.execution_id = p_execution_id OR c.execution_id = p_replace OR c.expires_at <= now()
    RETURNING c.execution_id INTO v_holder;
    IF FOUND THEN
      RETURN v_holder;
    END IF;
    SELECT c.execution_id INTO v_holder FROM ${n.correlationClaims} AS c
    WHERE c.correlation_id = p_correlation_id;
    IF FOUND THEN
      RETURN v_holder;
    END IF;
  END LOOP;
END
$fn$;

-- claim_resume: takes the resume lease of (p_execution_id, p_step) for p_claimant when it is free
-- or expired; of concurrent claimants exactly one wins. The winner claiming again is refused.
-- Arguments: p_execution_id, p_step, p_claimant, p_ttl_ms (the lease, > 0).
-- Returns: claimed, and the holder when not claimed.
-- Errors: none of its own. Time: the database clock.
CREATE FUNCTION ${n.claimResume}(p_execution_id text, p_step text, p_claimant text, p_ttl_ms bigint,
  OUT claimed boolean, OUT holder text)
LANGUAGE plpgsql AS $fn$
BEGIN
  LOOP
    INSERT INTO ${n.resumeClaims} AS r (execution_id, step, claimant, expires_at)
    VALUES (p_execution_id, p_step, p_claimant, now() + p_ttl_ms * interval '1 millisecond')
    ON CONFLICT (execution_id, step) DO UPDATE SET claimant = excluded.claimant, expires_at = excluded.expires_at
    WHERE r.expires_at <= now();
    IF FOUND THEN
      claimed := true;
      RETURN;
    END IF;
    SELECT r.claimant INTO holder FROM ${n.resumeClaims} AS r
    WHERE r.execution_id = p_execution_id AND r.step = p_step;
    IF FOUND THEN
      claimed := false;
      RETURN;
    END IF;
  END LOOP;
END
$fn$;

-- prune_expired: deletes up to p_limit expired rows of each table that expires (executions, with
-- their map parts; idempotency, correlation and resume claims).
-- Arguments: p_limit. Returns: the number of rows deleted. Errors: none of its own.
CREATE FUNCTION ${n.pruneExpired}(p_limit integer) RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
  v_total integer := 0;
  v_count integer;
BEGIN
  DELETE FROM ${n.executions} WHERE id IN (
    SELECT id FROM ${n.executions} WHERE expires_at <= now() LIMIT p_limit);
  GET DIAGNOSTICS v_count = ROW_COUNT;
  v_total := v_total + v_count;
  DELETE FROM ${n.idempotencyClaims} WHERE (reactor, key) IN (
    SELECT reactor, key FROM ${n.idempotencyClaims} WHERE expires_at <= now() LIMIT p_limit);
  GET DIAGNOSTICS v_count = ROW_COUNT;
  v_total := v_total + v_count;
  DELETE FROM ${n.correlationClaims} WHERE correlation_id IN (
    SELECT correlation_id FROM ${n.correlationClaims} WHERE expires_at <= now() LIMIT p_limit);
  GET DIAGNOSTICS v_count = ROW_COUNT;
  v_total := v_total + v_count;
  DELETE FROM ${n.resumeClaims} WHERE (execution_id, step) IN (
    SELECT execution_id, step FROM ${n.resumeClaims} WHERE expires_at <= now() LIMIT p_limit);
  GET DIAGNOSTICS v_count = ROW_COUNT;
  RETURN v_total + v_count;
END
$fn$;
`,
};
