/**
 * Read tokens: a scoped, expiring permission to read one execution's stream
 * (`GET /executions/:id/stream?token=…`), minted by an application's server with a secret it
 * shares with the dashboard and handed to a browser. A token is
 * `v1.<payload>.<signature>`: the payload names the execution and the expiry (base64url JSON),
 * the signature is its HMAC-SHA-256 under the secret (base64url). It grants nothing else.
 *
 * @module
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { parseDuration, type Duration } from '../dsl/duration.js';

/** The shortest secret accepted, in characters. */
export const MIN_READ_TOKEN_SECRET_LENGTH = 32;

/** Options of {@link createReadToken}. */
export interface ReadTokenOptions {
  /** The one execution the token lets its holder watch. */
  readonly executionId: string;
  /** How long the token is valid from now: ms, or a duration such as `'15m'`. */
  readonly expiresIn: Duration;
  /** The secret the dashboard verifies with (its `readTokenSecret`): at least 32 characters. */
  readonly secret: string;
  /** The time to count from (ms since the epoch). Default: now. */
  readonly now?: number;
}

/** What a token says about a request for one execution's stream. */
export type ReadTokenVerdict = 'valid' | 'expired' | 'foreign' | 'invalid';

/**
 * Why the stream route refused a token, as its problem body says (`error.details.reason`): the
 * token's verdict, or `not_accepted` when the dashboard has no `readTokenSecret`.
 */
export type ReadTokenRefusal = Exclude<ReadTokenVerdict, 'valid'> | 'not_accepted';

const VERSION = 'v1';

/**
 * `secret` when it can sign read tokens.
 *
 * @throws RangeError when it is not a string of at least {@link MIN_READ_TOKEN_SECRET_LENGTH} characters.
 */
export function checkReadTokenSecret(secret: unknown): string {
  if (typeof secret !== 'string' || secret.length < MIN_READ_TOKEN_SECRET_LENGTH)
    throw new RangeError(`a read-token secret must be a string of at least ${MIN_READ_TOKEN_SECRET_LENGTH} characters`);
  return secret;
}

function sign(secret: string, payload: string): string {
  return createHmac('sha256', secret).update(`${VERSION}.${payload}`).digest('base64url');
}

/**
 * Mints a read token for one execution's stream, valid for `expiresIn`. Call it on your server
 * (the secret never reaches the browser) and hand the token to the page that watches.
 *
 * @throws RangeError when the secret is shorter than 32 characters, `executionId` is empty, or
 *   `expiresIn` is not a positive duration.
 * @example
 * ```ts
 * const token = createReadToken({ executionId, expiresIn: '15m', secret: process.env.READ_TOKEN_SECRET! });
 * // in the browser: new EventSource(`/ops/executions/${executionId}/stream?token=${token}`)
 * ```
 */
export function createReadToken(options: ReadTokenOptions): string {
  const secret = checkReadTokenSecret(options.secret);
  if (typeof options.executionId !== 'string' || options.executionId === '')
    throw new RangeError('createReadToken: executionId must be a non-empty string');
  const ms = parseDuration(options.expiresIn);
  if (ms === undefined || ms <= 0)
    throw new RangeError(`createReadToken: expiresIn must be a positive duration; got ${String(options.expiresIn)}`);
  const expires = Math.floor((options.now ?? Date.now()) + ms);
  const payload = Buffer.from(JSON.stringify({ e: options.executionId, x: expires })).toString('base64url');
  return `${VERSION}.${payload}.${sign(secret, payload)}`;
}

/**
 * Whether `token` lets its holder read `executionId`'s stream at `now`: `valid`; `expired`;
 * `foreign` (signed, for another execution); `invalid` (malformed, or not signed with `secret`).
 */
export function verifyReadToken(
  token: string,
  options: { readonly secret: string; readonly executionId: string; readonly now?: number },
): ReadTokenVerdict {
  const secret = checkReadTokenSecret(options.secret);
  const [version, payload, signature, ...rest] = token.split('.');
  if (version !== VERSION || payload === undefined || signature === undefined || rest.length > 0) return 'invalid';
  const expected = Buffer.from(sign(secret, payload));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return 'invalid';
  let claims: { e?: unknown; x?: unknown };
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { e?: unknown; x?: unknown };
  } catch {
    return 'invalid';
  }
  if (typeof claims.e !== 'string' || typeof claims.x !== 'number') return 'invalid';
  if (claims.e !== options.executionId) return 'foreign';
  return (options.now ?? Date.now()) < claims.x ? 'valid' : 'expired';
}
