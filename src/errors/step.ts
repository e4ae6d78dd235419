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

/**
 * `ctx.progress(data)` refused its data (code `progress_invalid`), thrown into the step from the
 * call: `not_json` — the data has no JSON form (a cycle, a BigInt, a function, `undefined`);
 * `too_large` — its JSON is over the progress limit (`details.bytes`, `details.limit`). Nothing
 * was published or kept. Catch it in the body to go on without that report.
 */
export class ProgressInvalidError extends ReactorError<'progress_invalid'> {
  constructor(info: {
    step: string;
    attempt: number;
    reason: 'not_json' | 'too_large';
    bytes?: number;
    limit?: number;
  }) {
    const why =
      info.reason === 'not_json'
        ? 'the data has no JSON form (a cycle, a BigInt, a function or undefined)'
        : `its JSON is ${String(info.bytes)} bytes, over the limit of ${String(info.limit)}`;
    super(ErrorCode.ProgressInvalid, `step "${info.step}": progress refused: ${why}; nothing was published`, {
      details: { ...info },
    });
    this.name = 'ProgressInvalidError';
  }
}
registerRevival('ProgressInvalidError', ProgressInvalidError, [ErrorCode.ProgressInvalid]);
