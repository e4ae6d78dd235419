/**
 * Typed Lua script descriptors and the one runner every Redis call goes through.
 *
 * A script runs with EVALSHA; on `NOSCRIPT` (a restarted server, a failover, `SCRIPT FLUSH`) it
 * falls back to EVAL, which also loads it into the server's cache again. Errors are mapped in
 * one place ({@link toBackendError}): script error replies (`RX_*`) and server errors become
 * {@link ScriptError}, connection problems become {@link CoordinationUnavailableError}.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { CoordinationUnavailableError, ReactorError, ScriptError } from '../../errors.js';
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
export function defineScript<R>(name: LuaScriptName, numberOfKeys: number | 'variadic', decode: (reply: unknown) => R): ScriptDescriptor<R> {
  const source = luaSources[name];
  const sha = createHash('sha1').update(source).digest('hex');
  return Object.freeze({ name, numberOfKeys, source, sha, decode });
}

/** Runs `script` with EVALSHA (EVAL on `NOSCRIPT`) and decodes its reply. */
export async function runScript<R>(redis: Redis, script: ScriptDescriptor<R>, keys: readonly string[], args: readonly ScriptArg[]): Promise<R> {
  if (script.numberOfKeys !== 'variadic' && keys.length !== script.numberOfKeys) {
    throw new ScriptError(script.name, 'arity', `expected ${script.numberOfKeys} keys, got ${keys.length}`);
  }
  let reply: unknown;
  try {
    reply = await redis.evalsha(script.sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (!isNoScript(error)) throw toBackendError(script.name, error);
    try {
      reply = await redis.eval(script.source, keys.length, ...keys, ...args);
    } catch (retryError) {
      throw toBackendError(script.name, retryError);
    }
  }
  try {
    return script.decode(reply);
  } catch (error) {
    if (ReactorError.is(error)) throw error;
    throw new ScriptError(script.name, 'reply', `unexpected reply ${safeJSON(reply)}`, error);
  }
}

/** Runs a plain command under the same error mapping as scripts. */
export async function runCommand<R>(operation: string, command: () => Promise<R>): Promise<R> {
  try {
    return await command();
  } catch (error) {
    throw toBackendError(operation, error);
  }
}

const UNAVAILABLE_REPLIES = ['LOADING', 'BUSY', 'MASTERDOWN', 'READONLY', 'TRYAGAIN', 'CLUSTERDOWN', 'NOREPLICAS'];

/**
 * The one mapping of Redis failures to typed errors. A server error reply (`ReplyError`) is a
 * {@link ScriptError} (`reason` = the script's `RX_*` code, or `redis`), except replies that mean
 * "not now" (loading, busy, read-only replica…), which are — like every connection failure — a
 * {@link CoordinationUnavailableError}.
 */
export function toBackendError(operation: string, error: unknown): Error {
  if (ReactorError.is(error)) return error;
  if (!isReplyError(error)) return new CoordinationUnavailableError(operation, error);
  const message = error.message;
  const code = /^(RX_[A-Z_]+)\s+(.*)$/s.exec(message);
  if (code) return new ScriptError(operation, code[1] ?? 'RX', code[2] ?? message, error);
  if (UNAVAILABLE_REPLIES.some((prefix) => message.startsWith(prefix))) return new CoordinationUnavailableError(operation, error);
  return new ScriptError(operation, 'redis', message, error);
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
