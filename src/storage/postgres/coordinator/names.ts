/**
 * TEMPORARY: coordination names, to be folded into ../names.ts.
 *
 * @module
 */

/** The SQL functions of migration `0002_coordination`. */
export type CoordinationFunction =
  | 'coord_time'
  | 'coord_lock_acquire'
  | 'coord_lock_release'
  | 'coord_lock_extend'
  | 'coord_lock_state'
  | 'coord_semaphore_acquire'
  | 'coord_semaphore_release'
  | 'coord_semaphore_extend'
  | 'coord_semaphore_state'
  | 'coord_rate_take'
  | 'coord_rate_refund'
  | 'coord_rate_state'
  | 'coord_period_mark'
  | 'coord_period_state'
  | 'coord_ordered_ticket'
  | 'coord_ordered_enter'
  | 'coord_ordered_heartbeat'
  | 'coord_ordered_complete'
  | 'coord_ordered_skip'
  | 'coord_ordered_reset'
  | 'coord_ordered_state'
  | 'coord_purge';

/** The coordination tables. */
export type CoordinationTable =
  | 'coord_locks'
  | 'coord_semaphores'
  | 'coord_semaphore_leases'
  | 'coord_rates'
  | 'coord_rate_starts'
  | 'coord_periods'
  | 'coord_ordered'
  | 'coord_ordered_positions';

/** Names of the coordination objects of one schema. */
export interface CoordinationNames {
  /** The schema-qualified, quoted name of a function. */
  fn(name: CoordinationFunction): string;
  /** The schema-qualified, quoted name of a table. */
  table(name: CoordinationTable): string;
  /** The NOTIFY channel of the schema's coordination wake-ups and cancel announcements. */
  readonly channel: string;
}

/** Quotes an identifier. */
function quote(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}

/** The coordination names of `schema`. */
export function coordinationNames(schema: string): CoordinationNames {
  return {
    fn: (name) => `${quote(schema)}.${quote(name)}`,
    table: (name) => `${quote(schema)}.${quote(name)}`,
    channel: `${schema}_coord`.slice(0, 63),
  };
}
