/**
 * What one migration is: a version, a name, and the SQL that takes a schema from the previous
 * version to this one, built from the installation's names.
 *
 * @module
 */
import type { PostgresNames } from '../names.js';

/** One versioned migration. Versions start at 1 and follow each other without gaps. */
export interface Migration {
  /** Its version: the schema's version once it is applied. */
  readonly version: number;
  /** A short name (`store`, `coordination`), recorded beside the version. */
  readonly name: string;
  /** The SQL (several statements), for the schema `names` build. Run in one transaction. */
  sql(names: PostgresNames): string;
}
