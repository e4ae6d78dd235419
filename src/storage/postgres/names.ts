/**
 * Every name the PostgreSQL backend uses in SQL — its schema, tables, functions and the advisory
 * lock its migrations take — built in one place from one schema name. The schema name is checked
 * once, here, so every name can be written into SQL unquoted.
 *
 * @module
 */
import { RuntimeOptionError } from '../../errors.js';
import { shown } from '../record-ttl.js';

/** The functions of the coordination migration, without their `coord_` prefix. */
export type CoordinationFunction =
  | 'time'
  | 'ms'
  | 'us'
  | 'ms_until'
  | 'notify'
  | 'lock_acquire'
  | 'lock_release'
  | 'lock_extend'
  | 'lock_state'
  | 'lock_want'
  | 'semaphore_acquire'
  | 'semaphore_release'
  | 'semaphore_extend'
  | 'semaphore_state'
  | 'rate_take'
  | 'rate_refund'
  | 'rate_state'
  | 'period_mark'
  | 'period_state'
  | 'ordered_pass'
  | 'ordered_settle'
  | 'ordered_state'
  | 'ordered_ticket'
  | 'ordered_enter'
  | 'ordered_heartbeat'
  | 'ordered_complete'
  | 'ordered_skip'
  | 'ordered_reset'
  | 'purge';

/** The schema the backend's tables live in unless told otherwise. */
export const DEFAULT_SCHEMA = 'ts_reactor';

/** What a schema name may be: lower-case letters, digits and `_`, not starting with a digit or `pg_`, at most 63 bytes. */
const SCHEMA_NAME = /^(?!pg_)[a-z_][a-z0-9_]{0,62}$/;

/**
 * The names of one installation (one schema). Names are schema-qualified where SQL needs them so;
 * indexes and constraints are named inside their table's schema by the migrations.
 */
export class PostgresNames {
  /** The schema name, checked. */
  readonly schema: string;

  /**
   * @param schema The schema name (default {@link DEFAULT_SCHEMA}).
   * @param factory What to name in the error (the factory or class given the option).
   * @throws RuntimeOptionError when `schema` is not a plain lower-case SQL identifier.
   */
  constructor(schema: string = DEFAULT_SCHEMA, factory = 'PostgresStore') {
    if (typeof schema !== 'string' || !SCHEMA_NAME.test(schema))
      throw new RuntimeOptionError(
        { factory, option: 'schema', value: shown(schema) },
        'must be a lower-case SQL identifier (letters a-z, digits and _, not starting with a digit or pg_, at most 63 characters)',
      );
    this.schema = schema;
  }

  /** `<schema>.<name>`. */
  #q(name: string): string {
    return `${this.schema}.${name}`;
  }

  /** The applied migrations: one row per version. */
  get schemaMigrations(): string {
    return this.#q('schema_migrations');
  }
  /** One row per execution: the record and its projected columns. */
  get executions(): string {
    return this.#q('executions');
  }
  /** The element states of an execution's large maps, one row per map. */
  get executionMapParts(): string {
    return this.#q('execution_map_parts');
  }
  /** Idempotency claims: (reactor, key) → execution. */
  get idempotencyClaims(): string {
    return this.#q('idempotency_claims');
  }
  /** Interrupt correlation claims: correlation id → execution. */
  get correlationClaims(): string {
    return this.#q('correlation_claims');
  }
  /** Interrupt resume claims: short leases per (execution, step). */
  get resumeClaims(): string {
    return this.#q('resume_claims');
  }
  /** Function: create or replace one execution row (and its changed map parts). */
  get saveExecution(): string {
    return this.#q('save_execution');
  }
  /** Function: claim an idempotency key. */
  get claimIdempotency(): string {
    return this.#q('claim_idempotency');
  }
  /** Function: claim a correlation id. */
  get claimCorrelation(): string {
    return this.#q('claim_correlation');
  }
  /** Function: claim the resume of one interrupt. */
  get claimResume(): string {
    return this.#q('claim_resume');
  }
  /** Function: delete a batch of expired rows. */
  get pruneExpired(): string {
    return this.#q('prune_expired');
  }

  /** Exclusive locks: one row per key (holder, nesting, fencing token, expiry). */
  get coordLocks(): string {
    return this.#q('coord_locks');
  }
  /** Semaphores: one row per key (the latest acquire's limit). */
  get coordSemaphores(): string {
    return this.#q('coord_semaphores');
  }
  /** Semaphore leases: one row per holder of a slot. */
  get coordSemaphoreLeases(): string {
    return this.#q('coord_semaphore_leases');
  }
  /** Rate keys: one row per key (its longest window). */
  get coordRates(): string {
    return this.#q('coord_rates');
  }
  /** Rate starts: one row per start charged to a key (the sliding log). */
  get coordRateStarts(): string {
    return this.#q('coord_rate_starts');
  }
  /** Period markers: one row per marked bucket. */
  get coordPeriods(): string {
    return this.#q('coord_periods');
  }
  /** Ordered locks: one row per key (epoch and cursor). */
  get coordOrdered(): string {
    return this.#q('coord_ordered');
  }
  /** Ordered-lock positions: sign of life and out-of-turn completion per outstanding position. */
  get coordOrderedPositions(): string {
    return this.#q('coord_ordered_positions');
  }
  /** A function of the coordination migration (`coord_<name>`). */
  coordFunction(name: CoordinationFunction): string {
    return this.#q(`coord_${name}`);
  }
  /** Function: take an execution's liveness lease and read its record and cancel marker (job leases). */
  get jobEnter(): string {
    return this.#q('job_enter');
  }
  /** Function: save an execution's record, then release one level of its liveness lease (job leases). */
  get jobLeave(): string {
    return this.#q('job_leave');
  }
  /** Function: save an execution's record only while its liveness lease is held (job leases). */
  get jobSaveFenced(): string {
    return this.#q('job_save_fenced');
  }
  /** Fan-out ledgers: one row per map (its counters, phase and wake job). */
  get fanOutLedgers(): string {
    return this.#q('fanout_ledgers');
  }
  /** Fan-out elements: one row per settled element of a map (its status and claim). */
  get fanOutElements(): string {
    return this.#q('fanout_elements');
  }
  /** Function: create a map's ledger once. */
  get fanOutOpen(): string {
    return this.#q('fanout_open');
  }
  /** Function: record an element's settlement once and claim the next element. */
  get fanOutSettle(): string {
    return this.#q('fanout_settle');
  }
  /** Function: register the parent's wake job, and start the rollback. */
  get fanOutRegister(): string {
    return this.#q('fanout_register');
  }
  /** Function: mark a completed element undone and find the next to undo. */
  get fanOutUndone(): string {
    return this.#q('fanout_undone');
  }
  /** Function: a ledger's counters and element statuses (read only). */
  get fanOutView(): string {
    return this.#q('fanout_view');
  }
  /** Wait lists: one row per execution parked on a key, in arrival order. */
  get waitListEntries(): string {
    return this.#q('wait_list_entries');
  }
  /** Sequence: the arrival order of wait-list entries. */
  get waitListSequence(): string {
    return this.#q('wait_list_seq');
  }
  /** Function: park a job on a key (once). */
  get waitListAdd(): string {
    return this.#q('wait_list_add');
  }
  /** Function: take the first live waiter of a key. */
  get waitListShift(): string {
    return this.#q('wait_list_shift');
  }
  /** Events: one row per kept event (name, payload, times, effects). */
  get events(): string {
    return this.#q('events');
  }
  /** Function: keep an event once per id. */
  get eventAppend(): string {
    return this.#q('event_append');
  }
  /** Function: append an execution to one list of a kept event's effects, once. */
  get eventAddEffect(): string {
    return this.#q('event_add_effect');
  }
  /** Table: each execution's events in order (`engine.watch`). */
  get executionEvents(): string {
    return this.#q('execution_events');
  }
  /** The positions of execution events, across executions. */
  get executionEventSequence(): string {
    return this.#q('execution_event_seq');
  }
  /** Function: append events of several executions, in order per execution, and notify their watchers. */
  get executionEventsAppend(): string {
    return this.#q('execution_events_append');
  }
  /** Table: the event-wait index, one row per registration (event, match key, kind, execution, ref, since). */
  get eventWaits(): string {
    return this.#q('event_waits');
  }
  /** Function: file a registration of an execution waiting for an event, once. */
  get eventWaitAdd(): string {
    return this.#q('event_wait_add');
  }
  /** Function: remove a registration of an execution waiting for an event. */
  get eventWaitRemove(): string {
    return this.#q('event_wait_remove');
  }
  /**
   * The NOTIFY channel of execution events (its payload: an execution id):
   * `<schema>_events`, the schema cut to keep it within 63 bytes.
   */
  get eventsChannel(): string {
    return `${this.schema.slice(0, 56)}_events`;
  }
  /**
   * The NOTIFY channel of the coordination wake-ups and cancel announcements:
   * `<schema>_coord`, the schema cut to keep it within 63 bytes.
   */
  get coordChannel(): string {
    return `${this.schema.slice(0, 57)}_coord`;
  }

  /**
   * The two keys of the transaction-level advisory lock the migration runner takes
   * (`pg_advisory_xact_lock(int, int)`): a constant for ts-reactor and a hash of the schema name,
   * so runners of one schema wait for each other and those of other schemas do not.
   */
  get migrationLock(): readonly [number, number] {
    return [0x7472_7278, fnv1a(this.schema)]; // 'trrx'
  }
}

/** FNV-1a over the UTF-16 code units of `text`, as a signed 32-bit integer. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash | 0;
}
