/**
 * Typed Lua script descriptors and the one runner every Redis call goes through.
 *
 * A script runs with EVALSHA; on `NOSCRIPT` (a restarted server, a failover, `SCRIPT FLUSH`) it
 * falls back to EVAL, which also loads it into the server's cache again. Errors are mapped in
 * one place ({@link toBackendError}): script error replies (`RX_*`) and server errors become
 * {@link ScriptError}, connection problems become {@link StoreUnavailableError} for the
 * execution store's operations and {@link CoordinationUnavailableError} for the others.
 *
 * Outages (docs/decisions/065): a call that meets a connection problem is sent again, with
 * backoff, until its connection's outage tolerance ({@link setOutageTolerance}, default 30 s)
 * has passed since its first failure; only then does it fail. Every script and plain command
 * sent this way is retry-safe (each `.lua` header says how), except the {@link COUNTED} ones: a
 * lost reply of those may hide an effect that a second call would count again, so they are
 * sent again only by their caller, after it read what the lost call did ({@link settleAfterOutage}).
 * None of this runs while Redis answers: the healthy path is one call inside one try.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Command } from 'ioredis';
import type { RedisConnection } from './connection.js';
import { CoordinationUnavailableError, ReactorError, StoreUnavailableError } from '../../errors.js';
import { ScriptError } from './script-error.js';
import { luaSources, type LuaScriptName } from './lua/sources.gen.js';

/** A value passed in ARGV. */
export type ScriptArg = string | number;

/** A Lua script with its arity and the decoder of its reply. */
export interface ScriptDescriptor<R> {
  /** The file name without `.lua`. */
  readonly name: LuaScriptName;
  /** How many KEYS it takes; `'variadic'` when the caller decides (e.g. one key per window). */
  readonly numberOfKeys: number | 'variadic';
  readonly source: string;
  /** SHA-1 of the source, for EVALSHA. */
  readonly sha: string;
  /** Turns the raw reply into a typed value; throws {@link ScriptError} on an unexpected shape. */
  readonly decode: (reply: unknown) => R;
}

/** Declares a script by name; the source comes from the generated module. */
export function defineScript<R>(
  name: LuaScriptName,
  numberOfKeys: number | 'variadic',
  decode: (reply: unknown) => R,
): ScriptDescriptor<R> {
  const source = luaSources[name];
  const sha = createHash('sha1').update(source).digest('hex');
  return Object.freeze({ name, numberOfKeys, source, sha, decode });
}

/** Runs `script` with EVALSHA (EVAL on `NOSCRIPT`) and decodes its reply. */
export async function runScript<R>(
  redis: RedisConnection,
  script: ScriptDescriptor<R>,
  keys: readonly string[],
  args: readonly ScriptArg[],
): Promise<R> {
  if (script.numberOfKeys !== 'variadic' && keys.length !== script.numberOfKeys) {
    throw new ScriptError(script.name, 'arity', `expected ${script.numberOfKeys} keys, got ${keys.length}`);
  }
  let reply: unknown;
  try {
    reply = await evalsha(redis, script.sha, keys, args);
  } catch (error) {
    reply = await runScriptAgain(redis, script, keys, args, error);
  }
  try {
    return script.decode(reply);
  } catch (error) {
    if (ReactorError.is(error)) throw error;
    throw new ScriptError(script.name, 'reply', `unexpected reply ${safeJSON(reply)}`, error);
  }
}

/**
 * An `EVALSHA` whose arguments are given as the strings they are sent as. ioredis's own command
 * methods build each `Command` from a copy of the argument array made with
 * `Array.prototype.flat`, which costs about 0.1 µs per argument (a worker's turn sends scripts of
 * tens of arguments, many times a second); this one takes its array as it is. Sent, answered and
 * failed exactly like `redis.evalsha(...)` (same connection, same reply decoding, same errors).
 */
class EvalshaCommand extends Command {
  constructor(args: string[]) {
    super('evalsha', [], { replyEncoding: 'utf8' });
    this.args = args;
  }
}

/**
 * Sends `EVALSHA sha` with `keys` and `args`. Through ioredis's `evalsha` method when the
 * connection asks for what only that path does (a key prefix, friendly error stacks, automatic
 * pipelining); else as an {@link EvalshaCommand}.
 */
function evalsha(
  redis: RedisConnection,
  sha: string,
  keys: readonly string[],
  args: readonly ScriptArg[],
): Promise<unknown> {
  const options = redis.options as {
    keyPrefix?: unknown;
    showFriendlyErrorStack?: unknown;
    enableAutoPipelining?: unknown;
  };
  if (options.keyPrefix || options.showFriendlyErrorStack || options.enableAutoPipelining)
    return redis.evalsha(sha, keys.length, ...keys, ...args);
  const sent: string[] = [sha, String(keys.length), ...keys];
  for (const arg of args) sent.push(String(arg));
  return redis.sendCommand(new EvalshaCommand(sent)) as Promise<unknown>;
}

/**
 * The slow path of {@link runScript}, after its first send failed: EVAL on `NOSCRIPT` (nothing
 * ran); on a connection problem, the script again once the connection is back, until the
 * tolerance — for a {@link COUNTED} script only when the failure says it never ran.
 */
async function runScriptAgain(
  redis: RedisConnection,
  script: ScriptDescriptor<unknown>,
  keys: readonly string[],
  args: readonly ScriptArg[],
  first: unknown,
): Promise<unknown> {
  const resend = !COUNTED.has(script.name);
  let error = first;
  let since = -1;
  for (let attempt = 0; ; attempt++) {
    if (isNoScript(error)) {
      try {
        return await redis.eval(script.source, keys.length, ...keys, ...args);
      } catch (evalError) {
        error = evalError;
      }
    }
    if (since < 0) since = performance.now();
    await outlast(redis, script.name, error, since, attempt, resend || neverRan(error));
    try {
      return await evalsha(redis, script.sha, keys, args);
    } catch (again) {
      error = again;
    }
  }
}

/**
 * Runs a plain command under the same error mapping as scripts. With `redis` (the connection the
 * command goes out on), a connection problem is ridden out like a script's: the command is sent
 * again until the connection's outage tolerance has passed. Only pass it for a command that is
 * safe to send twice (a read, a `SET` of a whole value, a `ZREM`…).
 */
export async function runCommand<R>(operation: string, command: () => Promise<R>, redis?: RedisConnection): Promise<R> {
  try {
    return await command();
  } catch (error) {
    if (redis === undefined) throw toBackendError(operation, error);
    return runCommandAgain(redis, operation, command, error);
  }
}

async function runCommandAgain<R>(
  redis: RedisConnection,
  operation: string,
  command: () => Promise<R>,
  first: unknown,
): Promise<R> {
  const since = performance.now();
  let error = first;
  for (let attempt = 0; ; attempt++) {
    await outlast(redis, operation, error, since, attempt, true);
    try {
      return await command();
    } catch (again) {
      error = again;
    }
  }
}

// ── Outages ─────────────────────────────────────────────────────────────────────────────────

/** How long a call rides out an outage of its connection when nothing else was set: 30 s. */
export const DEFAULT_OUTAGE_TOLERANCE_MS = 30_000;

const tolerances = new WeakMap<RedisConnection, number>();

/**
 * Sets how long the calls on `redis` ride out an outage (connection lost, server loading or
 * busy): each call is sent again with backoff until this long after its first failure, then
 * fails with {@link StoreUnavailableError} or {@link CoordinationUnavailableError}. 0 fails at
 * the first failure. `createRedisBackend({ outageToleranceMs })` sets it on its connection.
 */
export function setOutageTolerance(redis: RedisConnection, toleranceMs: number): void {
  if (!Number.isFinite(toleranceMs) || toleranceMs < 0)
    throw new RangeError(`outageToleranceMs must be a finite number >= 0; got ${String(toleranceMs)}`);
  tolerances.set(redis, toleranceMs);
}

/** The outage tolerance of `redis` in ms ({@link DEFAULT_OUTAGE_TOLERANCE_MS} unless set). */
export function outageTolerance(redis: RedisConnection): number {
  return tolerances.get(redis) ?? DEFAULT_OUTAGE_TOLERANCE_MS;
}

/**
 * Scripts whose effect is counted, so that a second call after a lost reply would count it
 * again: a re-entrant acquire (one more nesting level), a release (one level less), a hand-over,
 * an operator's skip (one more position), an execution stream's append (its events twice). {@link runScript} never sends them again after a
 * failure that may have reached Redis; their callers settle such a failure with {@link settleAfterOutage}.
 */
export const COUNTED: ReadonlySet<string> = new Set([
  'lock-acquire',
  'lock-release',
  'lock-transfer',
  'semaphore-acquire',
  'semaphore-release',
  'job-enter',
  'ordered-skip',
  'stream-append',
]);

/** Operations of the execution store (records, indexes, claims, job leases, fan-out ledgers); the others are the coordinator's. */
const STORE_OPERATION = /^(?:record-|store-|job-|idempotency-|correlation-|resume-|fanout-)/;

/** True for an operation of the execution store (its connection failures are {@link StoreUnavailableError}). */
export function isStoreOperation(operation: string): boolean {
  return STORE_OPERATION.test(operation);
}

/**
 * Between two sends of a call that failed: throws the call's typed error when it cannot go on —
 * not a connection problem, the connection closed for good, `resend` false, or the tolerance
 * passed since `since` — else waits a backoff (20 ms doubling to 500 ms, never past the tolerance).
 * While ioredis reconnects, a command sent again waits in its offline queue for the next
 * connection attempt, so the pace of the attempts is the reconnect's.
 */
async function outlast(
  redis: RedisConnection,
  operation: string,
  error: unknown,
  since: number,
  attempt: number,
  resend: boolean,
): Promise<void> {
  const mapped = toBackendError(operation, error);
  if (!isUnavailable(mapped)) throw mapped;
  const toleranceMs = outageTolerance(redis);
  const waitedMs = performance.now() - since;
  if (!resend || redis.status === 'end' || waitedMs >= toleranceMs)
    throw unavailable(operation, causeOf(mapped), waitedMs >= 1 ? Math.round(waitedMs) : undefined);
  await sleep(Math.min(20 * 2 ** Math.min(attempt, 5), 500, toleranceMs - waitedMs));
}

/**
 * The slow path of a {@link COUNTED} call whose send failed (`first`): once Redis answers again,
 * `settle` reads what the lost call did — its result when it took effect, `undefined` when it
 * did not — and only a call that did not take effect is sent again (`again`), until the
 * connection's tolerance has passed. `settle` and `again` fail at their first connection
 * problem (their calls are {@link COUNTED} or reads); this loop rides it out.
 */
export async function settleAfterOutage<R>(
  redis: RedisConnection,
  operation: string,
  first: unknown,
  settle: () => Promise<R | undefined>,
  again: () => Promise<R>,
): Promise<R> {
  const since = performance.now();
  let error = first;
  for (let attempt = 0; ; attempt++) {
    await outlast(redis, operation, error, since, attempt, true);
    try {
      const settled = await settle();
      return settled === undefined ? await again() : settled;
    } catch (failed) {
      error = failed;
    }
  }
}

/**
 * True when `error` is a connection problem of an ioredis call (or a "not now" reply), as
 * opposed to an error of the call itself: for callers outside this module (the BullMQ queue)
 * whose errors are not all Redis'.
 */
export function isConnectionFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'ReplyError') return neverRan(error);
  if (
    error.name === 'MaxRetriesPerRequestError' ||
    error.name === 'ConnectionClosedError' ||
    error.message === 'Connection is closed.'
  )
    return true;
  const code = (error as { code?: unknown }).code;
  return neverRan(error) || (typeof code === 'string' && CONNECTION_CODES.has(code));
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** True when `error` says the command never reached Redis or Redis refused it unrun ("not now" replies, no offline queue). */
function neverRan(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const message = error.message;
  if (error.name === 'ReplyError') return UNAVAILABLE_REPLIES.some((prefix) => message.startsWith(prefix));
  return message.startsWith("Stream isn't writeable");
}

function isUnavailable(error: Error): boolean {
  return error instanceof StoreUnavailableError || error instanceof CoordinationUnavailableError;
}

/** The underlying failure of a mapped error (not the mapping itself, when a retry maps it again). */
function causeOf(error: Error): unknown {
  return isUnavailable(error) && error.cause !== undefined ? error.cause : error;
}

function unavailable(operation: string, cause: unknown, waitedMs?: number): Error {
  const reason = plainCause(cause);
  return isStoreOperation(operation)
    ? new StoreUnavailableError(operation, reason, waitedMs)
    : new CoordinationUnavailableError(operation, reason, waitedMs);
}

/** ioredis says "Reached the max retries per request limit (which is 0)…" when a connection drops with commands waiting: say that instead. */
function plainCause(cause: unknown): unknown {
  if (!(cause instanceof Error) || cause.name !== 'MaxRetriesPerRequestError') return cause;
  return new Error('the connection to Redis was lost or could not be made (ioredis reconnects)', { cause });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

const UNAVAILABLE_REPLIES = ['LOADING', 'BUSY', 'MASTERDOWN', 'READONLY', 'TRYAGAIN', 'CLUSTERDOWN', 'NOREPLICAS'];

/**
 * The one mapping of Redis failures to typed errors. A server error reply (`ReplyError`) is a
 * {@link ScriptError} (`reason` = the script's `RX_*` code, or `redis`), except replies that mean
 * "not now" (loading, busy, read-only replica…), which are — like every connection failure — a
 * {@link StoreUnavailableError} for a store operation ({@link isStoreOperation}) and a
 * {@link CoordinationUnavailableError} for the others. A `TypeError`, `RangeError`,
 * `SyntaxError` or `ReferenceError` is a bad argument or a bug, never an outage: it is returned
 * as it is (nothing waits for Redis to come back).
 */
export function toBackendError(operation: string, error: unknown): Error {
  if (ReactorError.is(error) || isProgrammingError(error)) return error;
  if (!isReplyError(error)) return unavailable(operation, error);
  const message = error.message;
  const code = /^(RX_[A-Z_]+)\s+(.*)$/s.exec(message);
  if (code) return new ScriptError(operation, code[1] ?? 'RX', code[2] ?? message, error);
  if (UNAVAILABLE_REPLIES.some((prefix) => message.startsWith(prefix))) return unavailable(operation, error);
  return new ScriptError(operation, 'redis', message, error);
}

function isProgrammingError(error: unknown): error is Error {
  return (
    error instanceof TypeError ||
    error instanceof RangeError ||
    error instanceof SyntaxError ||
    error instanceof ReferenceError
  );
}

function isReplyError(error: unknown): error is Error {
  return error instanceof Error && error.name === 'ReplyError';
}

function isNoScript(error: unknown): boolean {
  return isReplyError(error) && error.message.startsWith('NOSCRIPT');
}

function safeJSON(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

// ── Reply decoding helpers ──────────────────────────────────────────────────────────────────

/** The reply as an array (throws on another shape). */
export function replyArray(reply: unknown): readonly unknown[] {
  if (!Array.isArray(reply)) throw new TypeError('expected an array reply');
  return reply as readonly unknown[];
}

/** An integer reply (or a numeric string) as a number. */
export function replyNumber(reply: unknown): number {
  const n = typeof reply === 'number' ? reply : typeof reply === 'string' ? Number(reply) : Number.NaN;
  if (!Number.isFinite(n)) throw new TypeError('expected a number reply');
  return n;
}

/** A bulk string reply. */
export function replyString(reply: unknown): string {
  if (typeof reply === 'string') return reply;
  if (typeof reply === 'number') return String(reply);
  throw new TypeError('expected a string reply');
}
