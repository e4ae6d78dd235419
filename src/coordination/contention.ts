import { ContentionError } from '../errors.js';
import type { CoordinationScope } from './scope.js';

/** A timed-out wait as an error. */
export function contention(
  scope: CoordinationScope,
  primitive: 'lock' | 'semaphore' | 'ordered_lock',
  key: string,
  waitedMs: number,
  holder?: string,
): ContentionError {
  scope.emit({ type: 'coordination.contended', primitive, key, waitedMs, ...(holder === undefined ? {} : { holder }) });
  return new ContentionError({ reactor: scope.reactor, step: scope.step, primitive, key, waitedMs, holder });
}
