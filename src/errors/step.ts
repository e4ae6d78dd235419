/**
 * Errors of a step's body and of maps: a failure that is not retried, a map source over its limit,
 * a fan-out map that cannot go on.
 *
 * @module
 */

import { ErrorCode, type FanOutDetails } from '../error-codes.js';
import { ReactorError, registerRevival } from './base.js';

/**
 * Throw from a step body to fail without any further retry.
 *
 * @example
 * ```ts
 * if (card.expired) throw new NonRetryableError('card expired');
 * ```
 */
export class NonRetryableError extends ReactorError<'non_retryable'> {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(ErrorCode.NonRetryable, message, options);
    this.name = 'NonRetryableError';
  }
}
registerRevival('NonRetryableError', NonRetryableError, [ErrorCode.NonRetryable]);

/**
 * A map's source has more elements than the map's `maxElements` (code `map_too_large`): the map
 * fails before any element runs, and the run rolls back like any failed step.
 */
export class MapTooLargeError extends ReactorError<'map_too_large'> {
  constructor(step: string, elements: number, limit: number) {
    super(
      ErrorCode.MapTooLarge,
      `map "${step}": the source has ${elements} elements, over the map's limit of ${limit} (maxElements); raise maxElements on the map, or split the collection across runs (docs/limits.md)`,
      { details: { step, elements, limit } },
    );
    this.name = 'MapTooLargeError';
  }
}
registerRevival('MapTooLargeError', MapTooLargeError, [ErrorCode.MapTooLarge]);

/**
 * A fan-out map cannot go on: `fan_out_unknown` — its ledger or an element is unknown (never
 * opened, expired, an index out of range, a map the reactor does not have); `fan_out_unavailable`
 * — the engine has no fan-out ledger. `details` names the map (`mapId` or `step`).
 */
export class FanOutError extends ReactorError<'fan_out_unknown' | 'fan_out_unavailable'> {
  constructor(code: 'fan_out_unknown' | 'fan_out_unavailable', message: string, details: FanOutDetails) {
    super(code, message, { details });
    this.name = 'FanOutError';
  }
}
registerRevival('FanOutError', FanOutError, ['fan_out_unknown', 'fan_out_unavailable']);
