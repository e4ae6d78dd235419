/**
 * Every name the PostgreSQL backend uses in SQL — its schema, tables, functions and the advisory
 * lock its migrations take — built in one place from one schema name. The schema name is checked
 * once, here, so every name can be written into SQL unquoted.
 *
 * @module
 */
import { RuntimeOptionError } from '../../errors.js';
import { shown } from '../record-ttl.js';

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
