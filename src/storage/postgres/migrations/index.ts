/**
 * The migrations this ts-reactor ships, in version order. A new migration is a new module here,
 * appended with the next version; an applied migration is never edited.
 *
 * @module
 */
import { storeMigration } from './0001-store.js';
import { coordinationMigration } from './0002-coordination.js';
import { jobLeasesMigration } from './0003-job-leases.js';
import { fanOutMigration } from './0004-fanout.js';
import { waitListsMigration } from './0005-wait-lists.js';
import { waitListShiftMigration } from './0006-wait-list-shift.js';
import { eventsMigration } from './0007-events.js';
import { lockFastPathMigration } from './0008-lock-fast-path.js';
import { executionEventsMigration } from './0009-execution-events.js';
import { eventWaitsMigration } from './0010-event-waits.js';
import { inlinedClockMigration } from './0011-inlined-clock.js';
import type { Migration } from './migration.js';

export type { Migration } from './migration.js';

/** Every migration, in version order (versions 1, 2, … without gaps). */
export const MIGRATIONS: readonly Migration[] = [
  storeMigration,
  coordinationMigration,
  jobLeasesMigration,
  fanOutMigration,
  waitListsMigration,
  waitListShiftMigration,
  eventsMigration,
  lockFastPathMigration,
  executionEventsMigration,
  eventWaitsMigration,
  inlinedClockMigration,
];

/** The schema version this ts-reactor needs: the last migration's. */
export const SCHEMA_VERSION: number = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;
