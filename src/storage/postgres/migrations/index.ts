/**
 * The migrations this ts-reactor ships, in version order. A new migration is a new module here,
 * appended with the next version; an applied migration is never edited.
 *
 * @module
 */
import { storeMigration } from './0001-store.js';
import type { Migration } from './migration.js';

export type { Migration } from './migration.js';

/** Every migration, in version order (versions 1, 2, … without gaps). */
export const MIGRATIONS: readonly Migration[] = [storeMigration];

/** The schema version this ts-reactor needs: the last migration's. */
export const SCHEMA_VERSION: number = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;
