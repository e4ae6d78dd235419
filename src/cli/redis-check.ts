/**
 * Redis URL checks for the command line: a URL that is not a Redis URL, or a server that does
 * not answer a PING, is reported before anything starts. `ioredis` is loaded only when needed,
 * so commands that never touch Redis work without it.
 *
 * @module
 */

import type * as ioredis from 'ioredis';

/** A Redis URL that parsed, or why it did not. */
export type ParsedRedisUrl =
  { readonly ok: true; readonly url: string } | { readonly ok: false; readonly message: string };

/** Checks that `raw` is a `redis://` or `rediss://` URL with a host. */
export function parseRedisUrl(raw: string): ParsedRedisUrl {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    return { ok: false, message: `"${raw}" is not a URL; expected redis://[user:password@]host[:port][/db]` };
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    return {
      ok: false,
      message: `"${redactUrl(raw)}" is not a Redis URL (scheme ${parsed.protocol}); expected redis://host[:port] or rediss://host[:port]`,
    };
  }
  if (parsed.hostname === '')
    return { ok: false, message: `"${redactUrl(raw)}" names no host; expected redis://host[:port]` };
  return { ok: true, url: raw };
}

/** The URL with its password (if any) replaced by `***`, for printing. */
export function redactUrl(raw: string): string {
  try {
    const parsed = new URL(raw);
    if (parsed.password === '') return raw;
    parsed.password = '***';
    return parsed.toString();
  } catch {
    return raw;
  }
}

/** The `ioredis` module, as `import('ioredis')` gives it. */
type IoredisModule = typeof ioredis;

/** An optional peer dependency a command needs is not installed: the message names the package and how to add it. */
export class MissingPeerError extends Error {
  readonly peer: string;
  constructor(peer: string, cause?: unknown) {
    super(`this command needs the "${peer}" package, which is not installed: npm install ${peer}`, { cause });
    this.name = 'MissingPeerError';
    this.peer = peer;
  }
}

/** Imports the optional peer `ioredis`, or throws {@link MissingPeerError}. */
export async function loadIoredis(): Promise<IoredisModule> {
  try {
    return await import('ioredis');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' && String((error as Error).message).includes("'ioredis'"))
      throw new MissingPeerError('ioredis', error);
    throw error;
  }
}

/** "cannot reach Redis at <url>: <why>", or the missing package when that is why. */
export function unreachableMessage(url: string, error: unknown): string {
  return error instanceof MissingPeerError
    ? error.message
    : `cannot reach Redis at ${redactUrl(url)}: ${error instanceof Error ? error.message : String(error)}`;
}

/** Resolves when the server at `url` answers PING within `timeoutMs`; rejects with a readable error otherwise (a {@link MissingPeerError} without `ioredis`). */
export async function pingRedis(url: string, timeoutMs = 2_000): Promise<void> {
  const { Redis } = await loadIoredis();
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  let lastError: Error | undefined;
  redis.on('error', (error: Error) => (lastError = error));
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  const answer = (async () => {
    await redis.connect();
    const reply = await redis.ping();
    if (reply !== 'PONG') throw new Error(`PING answered ${JSON.stringify(reply)}`);
  })();
  // When the timeout wins the race, the disconnect below makes `answer` reject later: observed here.
  answer.catch(() => undefined);
  try {
    await Promise.race([answer, timeout]);
  } catch (error) {
    // With retries off, connect() rejects with "Connection is closed."; the cause came as an 'error' event.
    const cause = lastError as (Error & { code?: string }) | undefined;
    if (cause && cause !== error)
      throw new Error(
        cause.code !== undefined && !cause.message.includes(cause.code)
          ? `${cause.code}: ${cause.message}`
          : cause.message,
        { cause },
      );
    throw error;
  } finally {
    clearTimeout(timer);
    redis.disconnect();
  }
}

/** Opens a connection for the caller's own use (the demo's cleanup); quit it when done. */
export async function connectRedis(url: string) {
  const { Redis } = await loadIoredis();
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  return redis;
}
