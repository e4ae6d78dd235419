/**
 * Errors as data: every ts-reactor error survives a JSON round trip as its own class, with its
 * code, message, details, stack and cause; anything else comes back as a RemoteError.
 */
import { describe, expect, it } from 'vitest';
import {
  ArgumentResolutionError,
  ContentionError,
  DefinitionError,
  ErrorCode,
  errorFromJSON,
  errorToJSON,
  HoldLostError,
  NonRetryableError,
  RateLimitedError,
  ReactorError,
  RemoteError,
  ScriptError,
  ValidationError,
} from '../../src/index.js';
import {
  CancelledError,
  CoordinationUnavailableError,
  FanOutError,
  HandOffRefusedError,
  ResumePayloadError,
} from '../../src/errors.js';

const roundTrip = (error: unknown): ReactorError => errorFromJSON(JSON.parse(JSON.stringify(errorToJSON(error))));

describe('errorFromJSON', () => {
  const samples: readonly [string, ReactorError][] = [
    [
      'ContentionError',
      new ContentionError({ reactor: 'r', primitive: 'lock', key: 'k', waitedMs: 5, holder: 'execution e' }),
    ],
    [
      'RateLimitedError',
      new RateLimitedError({ reactor: 'r', key: 'k', limit: 2, periodMs: 1000, count: 2, retryAfterMs: 40 }),
    ],
    ['HoldLostError', new HoldLostError({ reactor: 'r', step: 's', primitive: 'semaphore', key: 'k' })],
    ['NonRetryableError', new NonRetryableError('card expired')],
    [
      'CoordinationUnavailableError',
      new CoordinationUnavailableError('lockAcquire', new Error('Connection is closed.')),
    ],
    ['ScriptError', new ScriptError('lock-acquire', 'RX_ARG', 'ttl must be a positive integer')],
    ['CancelledError', new CancelledError('x-1', 'operator')],
    ['FanOutError', new FanOutError('fan_out_unknown', 'no ledger', { parentId: 'p' })],
    [
      'HandOffRefusedError',
      new HandOffRefusedError({
        reactor: 'r',
        step: 's',
        kind: 'reactor',
        primitive: 'lock',
        key: 'k',
        executionId: 'x',
        holder: 'x',
      }),
    ],
    ['ArgumentResolutionError', new ArgumentResolutionError('s', 'a', new TypeError('boom'))],
    ['ReactorError', new ReactorError('queue_missing', 'background execution needs a queue')],
  ];

  it.each(samples)('rebuilds a %s as its own class with its data', (name, error) => {
    const back = roundTrip(error);
    expect(back).toBeInstanceOf(error.constructor);
    expect(back).toBeInstanceOf(ReactorError);
    expect(back).toBeInstanceOf(Error);
    expect(ReactorError.is(back)).toBe(true);
    expect(back.name).toBe(name);
    expect(back.code).toBe(error.code);
    expect(back.message).toBe(error.message);
    expect(back.details).toEqual(JSON.parse(JSON.stringify(error.details)));
    expect(Object.isFrozen(back.details)).toBe(true);
    expect(back.stack).toBe(error.stack);
    expect(errorToJSON(back)).toEqual(errorToJSON(error)); // and it serializes the same again
  });

  it('keeps the cause chain, each link as its own class', () => {
    const inner = new ContentionError({ reactor: 'r', primitive: 'lock', key: 'k', waitedMs: 1 });
    const outer = new ArgumentResolutionError('s', 'a', inner);
    const back = roundTrip(outer);
    expect(back).toBeInstanceOf(ArgumentResolutionError);
    expect(back.cause).toBeInstanceOf(ContentionError);
    expect((back.cause as ContentionError).details.key).toBe('k');
  });

  it('restores the fields a class derives from its details', () => {
    const invalid = roundTrip(
      new ValidationError(ErrorCode.InputInvalid, 'bad', [{ path: 'amount', message: 'must be positive' }], {
        reactor: 'r',
      }),
    );
    expect(invalid).toBeInstanceOf(ValidationError);
    expect((invalid as ValidationError).issues).toEqual([{ path: 'amount', message: 'must be positive' }]);
    const payload = roundTrip(
      new ResumePayloadError({ executionId: 'x', step: 'approve', attempt: 1, maxAttempts: 3, exhausted: false }, [
        { path: 'ok', message: 'required' },
      ]),
    );
    expect((payload as ResumePayloadError).issues).toEqual([{ path: 'ok', message: 'required' }]);
    const definition = roundTrip(new DefinitionError('no steps', 'r', 's'));
    expect(definition).toMatchObject({ reactor: 'r', step: 's' });
  });

  it('keeps a foreign error that merely shares a name, or an unknown class, as a RemoteError', () => {
    class ValidationErrorOfSomeLibrary extends Error {
      override name = 'ValidationError';
    }
    const foreign = roundTrip(new ValidationErrorOfSomeLibrary('not ours'));
    expect(foreign).toBeInstanceOf(RemoteError);
    expect(foreign).not.toBeInstanceOf(ValidationError);
    expect(foreign.name).toBe('ValidationError');
    const plain = roundTrip(new TypeError('boom'));
    expect(plain).toBeInstanceOf(RemoteError);
    expect(plain).toMatchObject({
      name: 'TypeError',
      code: ErrorCode.Remote,
      message: 'boom',
      details: { originalName: 'TypeError' },
    });
  });

  it('gives a rebuilt error without a stored stack a stack of its own', () => {
    const back = errorFromJSON({ name: 'ContentionError', message: 'busy', code: 'contention', details: { key: 'k' } });
    expect(back).toBeInstanceOf(ContentionError);
    expect(typeof back.stack).toBe('string');
  });
});
