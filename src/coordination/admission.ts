/**
 * The outcome of an admission, in a file of its own: `admit.ts` returns it and `ordered.ts`
 * (which `admit.ts` calls) returns its stops, so neither imports the other for it.
 *
 * @module
 */
import type { Holds } from './holds.js';

/** The outcome of an admission. On `halt` and `refused`, nothing is left held. */
export type Admission =
  | { readonly kind: 'admitted'; readonly holds: Holds }
  | {
      readonly kind: 'halt';
      readonly reason: 'period' | 'ordered_lock_chain_failed';
      readonly data: Readonly<Record<string, unknown>>;
    }
  | { readonly kind: 'refused'; readonly error: Error };
