/**
 * A command's backend URL (`--redis <url>`, `REDIS_URL`, or `--postgres <url>`): the backend its
 * scheme names, by the one table of `src/runtime/backend-schemes.ts`, then that backend's own URL
 * check. A scheme no backend of this build serves is refused with the `BackendUnavailableError`
 * as its `cause`.
 *
 * @module
 */
import { BackendUnavailableError } from '../errors.js';
import { backendOfUrl, type BackendKind } from '../runtime/backend-schemes.js';
import { parseRedisUrl } from './redis-check.js';

/** A backend URL that passed its checks (the backend it names and the URL), or why it did not. */
export type BackendUrl =
  | { readonly ok: true; readonly backend: BackendKind; readonly url: string }
  | { readonly ok: false; readonly message: string; readonly cause?: BackendUnavailableError };

/**
 * Reads `raw`: the backend its scheme names, then that backend's URL check. Refused when no
 * backend of this build serves the scheme (`cause`: the `BackendUnavailableError`), when the URL
 * fails the backend's check, or when `expected` is given and the URL names another backend (the
 * flag and the URL disagree).
 */
export function readBackendUrl(raw: string, expected?: BackendKind): BackendUrl {
  let backend;
  try {
    backend = backendOfUrl(raw);
  } catch (error) {
    if (error instanceof BackendUnavailableError) return { ok: false, message: error.message, cause: error };
    throw error;
  }
  if (backend !== undefined && expected !== undefined && backend !== expected)
    return { ok: false, message: `a ${backend} URL given where a ${expected} one is expected: use --${backend} <url>` };
  if (backend === 'postgres') return { ok: true, backend, url: raw };
  if (expected === 'postgres')
    return { ok: false, message: `"${raw}" is not a URL; expected postgres://user:password@host:port/database` };
  const parsed = parseRedisUrl(raw);
  return parsed.ok ? { ok: true, backend: 'redis', url: parsed.url } : parsed;
}
