/**
 * The PostgreSQL backend's own error: its schema is missing or at another version than this
 * ts-reactor expects. It registers its revival here (docs/decisions/123), so `errorFromJSON`
 * rebuilds it as itself in any process that loaded the PostgreSQL backend.
 *
 * @module
 */
import { ErrorCode } from '../../error-codes.js';
import { ReactorError, registerRevival } from '../../errors/base.js';

/** The command that brings a database's schema to this version (named in the error's message). */
export const MIGRATE_COMMAND = 'ts-reactor migrate --postgres <url>';

/**
 * The database's ts-reactor schema is missing, or at another version than this ts-reactor's
 * (code `postgres_schema_mismatch`). Nothing was read or written. `details.found` is the version
 * the database has (0: none), `details.expected` the version this ts-reactor needs. An older
 * schema is brought up to date by `ts-reactor migrate --postgres <url>` or the `migrate: true`
 * option; a newer one needs a newer ts-reactor.
 */
export class PostgresSchemaError extends ReactorError<'postgres_schema_mismatch'> {
  constructor(info: { schema: string; found: number; expected: number }) {
    super(ErrorCode.PostgresSchemaMismatch, schemaProblem(info), { details: { ...info } });
    this.name = 'PostgresSchemaError';
  }
}
registerRevival('PostgresSchemaError', PostgresSchemaError, ['postgres_schema_mismatch']);

function schemaProblem(info: { schema: string; found: number; expected: number }): string {
  const { schema, found, expected } = info;
  if (found > expected)
    return `PostgreSQL schema "${schema}" is at version ${found}, newer than this ts-reactor's ${expected}: upgrade ts-reactor`;
  const state = found === 0 ? 'has no ts-reactor tables (version 0)' : `is at version ${found}`;
  return `PostgreSQL schema "${schema}" ${state}; this ts-reactor needs version ${expected}: run \`${MIGRATE_COMMAND}\` or pass migrate: true`;
}
