import { describe, expectTypeOf, test } from 'vitest';
import {
  ContentionError,
  ErrorCode,
  errorFromJSON,
  FanOutError,
  RateLimitedError,
  ReactorError,
  type RemoteError,
  ValidationError,
  type ErrorDetails,
  type FieldIssue,
} from '../../src/index.js';

describe('error codes', () => {
  test('ErrorCode (the type) is exactly the values of ErrorCode (the object), and each has its details', () => {
    expectTypeOf<(typeof ErrorCode)[keyof typeof ErrorCode]>().toEqualTypeOf<ErrorCode>();
    expectTypeOf<keyof ErrorDetails>().toEqualTypeOf<ErrorCode>();
    expectTypeOf(ErrorCode.Contention).toEqualTypeOf<'contention'>();
  });

  test('a ReactorError is constructed with a known code only, and with the details that code requires', () => {
    expectTypeOf(new ReactorError('queue_missing', 'no queue')).toMatchTypeOf<ReactorError>();
    // @ts-expect-error: not an ErrorCode
    new ReactorError('no_such_code', 'boom', {});
    // @ts-expect-error: reactor_unknown names the reactor
    new ReactorError('reactor_unknown', 'who?');
    // @ts-expect-error: a misspelled detail
    new ReactorError('reactor_unknown', 'who?', { details: { reactr: 'r' } });
    new ReactorError('reactor_unknown', 'who?', { details: { reactor: 'r' } });
    class Mine extends ReactorError {
      constructor() {
        // @ts-expect-error: a subclass is held to the same codes
        super('mine', 'mine', {});
      }
    }
    expectTypeOf<Mine>().toMatchTypeOf<ReactorError>();
  });

  test('details are typed on an error of a specific class, without a cast', () => {
    const busy = new ContentionError({ reactor: 'r', primitive: 'lock', key: 'k', waitedMs: 1 });
    expectTypeOf(busy.code).toEqualTypeOf<'contention'>();
    expectTypeOf(busy.details.key).toEqualTypeOf<string>();
    expectTypeOf(busy.details.primitive).toEqualTypeOf<'lock' | 'semaphore' | 'rate_limit' | 'ordered_lock'>();
    // @ts-expect-error: not a field of contention
    void busy.details.retryAfterMs;
    const limited = new RateLimitedError({ reactor: 'r', key: 'k', limit: 1, periodMs: 1, count: 1, retryAfterMs: 5 });
    expectTypeOf(limited.details.retryAfterMs).toEqualTypeOf<number>();
    const invalid = new ValidationError('input_invalid', 'bad', [], { reactor: 'r' });
    expectTypeOf(invalid.details.issues).toEqualTypeOf<readonly FieldIssue[]>();
    expectTypeOf(new FanOutError('fan_out_unknown', 'gone', { mapId: 'm' }).details.mapId).toEqualTypeOf<
      string | undefined
    >();
  });

  test('ReactorError.is narrows by code; any ReactorError keeps untyped details and may carry a foreign code', () => {
    const error: unknown = errorFromJSON({ name: 'Error', message: 'refused', code: 'ECONNREFUSED' });
    if (ReactorError.is(error, 'reactor_unknown')) expectTypeOf(error.details.reactor).toEqualTypeOf<string>();
    if (ReactorError.is(error)) {
      expectTypeOf(error.details).toEqualTypeOf<Readonly<Record<string, unknown>>>();
      expectTypeOf<'ECONNREFUSED'>().toMatchTypeOf<typeof error.code>();
      expectTypeOf<ErrorCode>().toMatchTypeOf<typeof error.code>();
    }
    expectTypeOf<RemoteError['details']['originalName']>().toEqualTypeOf<string>();
    expectTypeOf<ContentionError>().toMatchTypeOf<ReactorError>();
  });
});
