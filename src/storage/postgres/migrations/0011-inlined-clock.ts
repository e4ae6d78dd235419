/**
 * Migration 11, `inlined-clock`: `coord_us` and `coord_ms` declared `STABLE` instead of
 * `IMMUTABLE`, so the planner inlines them (docs/decisions/155).
 *
 * Their bodies read `extract(epoch FROM <timestamptz>)`, which PostgreSQL marks stable; an SQL
 * function declared immutable whose body is not is never inlined, so every call ran as a call of
 * its own (a plan of its body each time). Inlined, the expression is evaluated in place: a lock
 * acquire's `UPDATE` (the fencing token `greatest(last + 1, clock µs)`) costs about half as much.
 * The values are unchanged, and no index or generated column uses either function (the only
 * places a stable function would be refused).
 *
 * @module
 */
import type { Migration } from './migration.js';

/** The `inlined-clock` migration. */
export const inlinedClockMigration: Migration = {
  version: 11,
  name: 'inlined-clock',
  sql: (n) => `
-- coord_us: microseconds since the Unix epoch of p_at (the fencing-token floor).
--   Arguments: p_at. Results: the µs. Errors: none. Now STABLE: inlined where it is called.
ALTER FUNCTION ${n.coordFunction('us')}(timestamptz) STABLE;

-- coord_ms: milliseconds since the Unix epoch of p_at (ordered-lock epochs, coord_time).
--   Arguments: p_at. Results: the ms. Errors: none. Now STABLE: inlined where it is called.
ALTER FUNCTION ${n.coordFunction('ms')}(timestamptz) STABLE;
`,
};
