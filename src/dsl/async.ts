/**
 * Definition-side pieces of `asyncStep`: its options (an inline step without `undo`) and the
 * refusal message.
 *
 * @module
 */
import type { InlineStepOptions } from './reactor.js';

/**
 * Options of an inline `asyncStep`: those of an inline step, without `undo` — an async unit is
 * its own work, which its dispatcher's rollback never undoes (use `compensate`).
 */
export type AsyncStepOptions<I, S, A, R> = Omit<InlineStepOptions<I, S, A, R>, 'undo'> & { readonly undo?: never };

/** Why an inline `asyncStep` may not declare `undo`. */
export function asyncUndoRefusal(name: string): string {
  return `asyncStep "${name}" declares undo, which would never run: an async unit is not undone by its dispatcher's rollback. Use compensate (it runs in the unit's own job when its last attempt fails), or make it a .step`;
}
