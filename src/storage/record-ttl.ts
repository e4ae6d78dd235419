/**
 * The `recordTtlMs` option of the runtime factories, checked before anything opens: a positive
 * integer of milliseconds, or `Infinity` to keep records (docs/decisions/104, 117). Both stores
 * take what passes; anything else is a {@link RuntimeOptionError} naming the factory.
 *
 * @module
 */
import { RuntimeOptionError } from '../errors.js';

/** `value` when it is a valid `recordTtlMs` (or absent). @throws RuntimeOptionError otherwise, naming `factory`. */
export function checkedRecordTtl(factory: string, value: unknown): number | undefined {
  if (value === undefined || value === Infinity) return value;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1) return value;
  throw new RuntimeOptionError(
    { factory, option: 'recordTtlMs', value: shown(value) },
    'must be a positive integer of milliseconds, or Infinity to keep records',
  );
}

/**
 * Refuses a `recordTtlMs` given beside a `store` of the caller's own: that store keeps records for
 * the TTL it was built with, and the factory cannot change it.
 * @throws RuntimeOptionError
 */
export function refuseTtlBesideStore(factory: string, recordTtlMs: unknown, store: unknown): void {
  if (recordTtlMs === undefined || store === undefined) return;
  throw new RuntimeOptionError(
    { factory, option: 'recordTtlMs', value: shown(recordTtlMs) },
    'cannot be honoured beside a store of your own (the store keeps records for the TTL it was built with): pass recordTtlMs to the store, e.g. new MemoryStore({ recordTtlMs }), and leave it out here',
  );
}

/** A rejected value as text: a number as it prints, anything else as JSON (or its type). */
export function shown(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  try {
    return JSON.stringify(value) ?? typeof value;
  } catch {
    return typeof value;
  }
}
