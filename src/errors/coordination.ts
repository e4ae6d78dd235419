/**
 * Errors of the coordination primitives: a key still busy, a rate limit full, a key or limit
 * function that failed, an unknown named rate limit, a stale ordered-lock position, a hold lost.
 *
 * @module
 */

import { type ContendedPrimitive, type PrimitiveName } from '../error-codes.js';
import { ReactorError, registerRevival } from './base.js';

/**
 * A coordination key was busy for longer than the declared `wait` (in-process), or beyond the
 * contention cap (worker). Nothing of the attempt ran and nothing is left held.
 */
export class ContentionError extends ReactorError<'contention'> {
  constructor(info: {
    reactor: string;
    step?: string | undefined;
    primitive: ContendedPrimitive;
    key: string;
    waitedMs: number;
    holder?: string | undefined;
  }) {
    const where =
      info.step === undefined ? `reactor "${info.reactor}"` : `reactor "${info.reactor}", step "${info.step}"`;
    const holder = info.holder === undefined ? '' : ` (held by ${info.holder})`;
    super(
      'contention',
      `${where}: ${info.primitive.replace('_', ' ')} "${info.key}" still busy after ${info.waitedMs} ms${holder}`,
      { details: { ...info } },
    );
    this.name = 'ContentionError';
  }
}
registerRevival('ContentionError', ContentionError, ['contention']);

/** A rate limit refused a start: `details` carries the window, the limit and `retryAfterMs`. */
export class RateLimitedError extends ReactorError<'rate_limited'> {
  constructor(info: {
    reactor: string;
    step?: string | undefined;
    key: string;
    limit: number;
    periodMs: number;
    count: number;
    retryAfterMs: number;
  }) {
    const where =
      info.step === undefined ? `reactor "${info.reactor}"` : `reactor "${info.reactor}", step "${info.step}"`;
    super(
      'rate_limited',
      `${where}: rate limit "${info.key}" allows ${info.limit} per ${info.periodMs} ms (${info.count} in the window); retry after ${Math.ceil(info.retryAfterMs)} ms`,
      {
        details: { ...info },
      },
    );
    this.name = 'RateLimitedError';
  }
}
registerRevival('RateLimitedError', RateLimitedError, ['rate_limited']);

/** A coordination key function threw or returned something other than a non-empty string. */
export class CoordinationKeyError extends ReactorError<'coordination_key_invalid'> {
  constructor(
    info: { reactor: string; step?: string | undefined; primitive: PrimitiveName; problem: string },
    cause?: unknown,
  ) {
    const where =
      info.step === undefined ? `reactor "${info.reactor}"` : `reactor "${info.reactor}", step "${info.step}"`;
    super(
      'coordination_key_invalid',
      `${where}: the ${info.primitive.replace('_', ' ')} key could not be computed: ${info.problem}`,
      { cause, details: { ...info } },
    );
    this.name = 'CoordinationKeyError';
  }
}
registerRevival('CoordinationKeyError', CoordinationKeyError, ['coordination_key_invalid']);

/**
 * A semaphore's or rate window's `limit` function threw, or returned something other than an
 * integer ≥ 1, at admission: nothing was taken.
 */
export class CoordinationLimitError extends ReactorError<'coordination_limit_invalid'> {
  constructor(
    info: { reactor: string; step?: string | undefined; primitive: PrimitiveName; key: string; problem: string },
    cause?: unknown,
  ) {
    const where =
      info.step === undefined ? `reactor "${info.reactor}"` : `reactor "${info.reactor}", step "${info.step}"`;
    super(
      'coordination_limit_invalid',
      `${where}: the ${info.primitive.replace('_', ' ')} limit of key "${info.key}" could not be computed: ${info.problem}; a limit function must return an integer >= 1`,
      { cause, details: { ...info } },
    );
    this.name = 'CoordinationLimitError';
  }
}
registerRevival('CoordinationLimitError', CoordinationLimitError, ['coordination_limit_invalid']);

/** A declaration names a rate limit the engine was not given. */
export class UnknownRateLimitError extends ReactorError<'rate_limit_unknown'> {
  constructor(reactor: string, name: string, known: readonly string[]) {
    super(
      'rate_limit_unknown',
      `reactor "${reactor}": unknown named rate limit "${name}"; register it with createEngine({ rateLimits: { ${name}: [...] } }) (known: ${known.join(', ') || 'none'})`,
      {
        details: { reactor, name, known },
      },
    );
    this.name = 'UnknownRateLimitError';
  }
}
registerRevival('UnknownRateLimitError', UnknownRateLimitError, ['rate_limit_unknown']);

/** An ordered-lock position belongs to a batch that was drained or reset. */
export class OrderedLockStaleError extends ReactorError<'ordered_lock_stale'> {
  constructor(info: { reactor: string; key: string; nonce: number; epoch: number; currentEpoch: number | undefined }) {
    const why =
      info.currentEpoch === undefined
        ? 'was passed over (its holder showed no sign of life for the poison timeout, or an operator skipped it)'
        : `belongs to epoch ${info.epoch}, the key is at epoch ${info.currentEpoch}`;
    super('ordered_lock_stale', `reactor "${info.reactor}": ordered lock "${info.key}" position ${info.nonce} ${why}`, {
      details: { ...info },
    });
    this.name = 'OrderedLockStaleError';
  }
}
registerRevival('OrderedLockStaleError', OrderedLockStaleError, ['ordered_lock_stale']);

/** The holder learned it no longer holds a lock or semaphore slot (expired or taken over). */
export class HoldLostError extends ReactorError<'hold_lost'> {
  constructor(info: { reactor: string; step?: string | undefined; primitive: PrimitiveName; key: string }) {
    super(
      'hold_lost',
      `reactor "${info.reactor}": lost the ${info.primitive.replace('_', ' ')} "${info.key}" while working (it expired or was taken over)`,
      { details: { ...info } },
    );
    this.name = 'HoldLostError';
  }
}
registerRevival('HoldLostError', HoldLostError, ['hold_lost']);
