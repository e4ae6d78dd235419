/**
 * The PostgreSQL backend's own errors: its schema is missing or at another version than this
 * ts-reactor expects, or the role connected lacks rights on it; the server refused the
 * connection string's login or database. They register their revival here (docs/decisions/123),
 * so `errorFromJSON` rebuilds them as themselves in any process that loaded the PostgreSQL backend.
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

/**
 * The role ts-reactor connected as lacks rights on its schema or tables (code
 * `postgres_permission_denied`), found by the start-up check before anything is written.
 * `details.missing` says what is lacking: `usage on schema`, `create in database` (to migrate),
 * or the tables without SELECT, INSERT, UPDATE and DELETE. The message names the GRANT statements
 * that fix it, to be run by the schema's owner (docs/decisions/133).
 */
export class PostgresPermissionError extends ReactorError<'postgres_permission_denied'> {
  constructor(info: { schema: string; role: string; missing: string }) {
    super(ErrorCode.PostgresPermissionDenied, permissionProblem(info), { details: { ...info } });
    this.name = 'PostgresPermissionError';
  }
}
registerRevival('PostgresPermissionError', PostgresPermissionError, ['postgres_permission_denied']);

function permissionProblem(info: { schema: string; role: string; missing: string }): string {
  const { schema, role, missing } = info;
  const who = `"${role.replaceAll('"', '""')}"`;
  if (missing === 'create in database')
    return `PostgreSQL role ${who} may not create schema "${schema}": run \`${MIGRATE_COMMAND}\` as the schema's owner, or GRANT CREATE ON DATABASE to ${who}`;
  return (
    `PostgreSQL role ${who} lacks rights on schema "${schema}" (${missing}): as the schema's owner, run ` +
    `GRANT USAGE ON SCHEMA ${schema} TO ${who}; ` +
    `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${who}; ` +
    `GRANT USAGE ON ALL SEQUENCES IN SCHEMA ${schema} TO ${who}; ` +
    `GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${schema} TO ${who}`
  );
}

/**
 * PostgreSQL refused the connection string itself (code `postgres_login_refused`): a wrong
 * password, a user (role) it does not know or may not log in as (SQLSTATE class `28`), or a
 * database that does not exist (`3D000`). Trying again does not help, unlike
 * `StoreUnavailableError`: the message names the fix. Nothing was read or written.
 */
export class PostgresLoginError extends ReactorError<'postgres_login_refused'> {
  constructor(info: { sqlstate: string; refused: 'login' | 'database' }, serverMessage: string, cause?: unknown) {
    const fix =
      info.refused === 'login'
        ? 'check the user and password in the connection string (and that the role may log in)'
        : 'check the database name in the connection string, or create the database';
    super(ErrorCode.PostgresLoginRefused, `PostgreSQL refused the connection: ${serverMessage}: ${fix}`, {
      cause,
      details: { ...info },
    });
    this.name = 'PostgresLoginError';
  }
}
registerRevival('PostgresLoginError', PostgresLoginError, ['postgres_login_refused']);

/**
 * The {@link PostgresLoginError} an error of `pg` stands for, when PostgreSQL refused the login
 * (SQLSTATE class `28`) or the database (`3D000`); `undefined` for any other error.
 */
export function loginRefusal(error: unknown): PostgresLoginError | undefined {
  const sqlstate = (error as { code?: unknown } | null)?.code;
  if (typeof sqlstate !== 'string') return undefined;
  const refused = sqlstate.startsWith('28') ? 'login' : sqlstate === '3D000' ? 'database' : undefined;
  if (refused === undefined) return undefined;
  return new PostgresLoginError({ sqlstate, refused }, (error as Error).message, error);
}
