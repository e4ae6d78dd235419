/**
 * The PostgreSQL backend's public surface: the store, the coordinator, the job leases, fan-out ledger and wait lists, the migration runner and
 * schema check, the names of its tables, and its error.
 *
 * @module
 */
export { LISTEN_APPLICATION, PostgresCoordinator, type PostgresCoordinatorOptions } from './coordinator.js';
export { postgresConnection, type PostgresConnection, type PostgresConnectionOption } from './connection.js';
export { MIGRATE_COMMAND, PostgresLoginError, PostgresPermissionError, PostgresSchemaError } from './errors.js';
export { DEFAULT_LEDGER_TTL_MS, PostgresFanOutLedger, type PostgresFanOutLedgerOptions } from './fanout.js';
export { PostgresJobLeases } from './job-leases.js';
export { checkSchema, migrate, schemaVersion, type MigrateResult } from './migrate.js';
export { MIGRATIONS, SCHEMA_VERSION, type Migration } from './migrations/index.js';
export { DEFAULT_SCHEMA, PostgresNames } from './names.js';
export { DEFAULT_MAX_RECORD_BYTES, PostgresStore, type PostgresStoreOptions } from './store.js';
export { DEFAULT_WAITER_TTL_MS, PostgresWaitList, type PostgresWaitListOptions } from './wait-list.js';
export { PostgresEventLog, type PostgresEventLogOptions } from './event-log.js';
export { PostgresEventWaits, type PostgresEventWaitsOptions } from './event-waits.js';
