/**
 * A command's backend URL (`--redis <url>` or `REDIS_URL`): the backend its scheme names, by the
 * one table of `src/runtime/backend-schemes.ts`, then that backend's own URL check. A scheme no
 * backend of this build serves (`postgres://` for now) is refused with the
 * `BackendUnavailableError` as its `cause`.
 *
 * @module
 */
import { BackendUnavailableError } from '../errors.js';
import { backendOfUrl } from '../runtime/backend-schemes.js';
import { parseRedisUrl } from './redis-check.js';

/** A backend URL that passed its checks (the backend it names and the URL), or why it did not. */
export type BackendUrl =
  | { readonly ok: true; readonly backend: 'redis'; readonly url: string }
  | { readonly ok: false; readonly message: string; readonly cause?: BackendUnavailableError };

/**
 * Reads `raw`: the backend its scheme names, then that backend's URL check. Refused when no
 * backend of this build serves the scheme (`cause`: the `BackendUnavailableError`), or when the
 * URL fails the backend's check.
 */
export function readBackendUrl(raw: string): BackendUrl {
  let backend;
  try {
    backend = backendOfUrl(raw);
  } catch (error) {
    if (error instanceof BackendUnavailableError) return { ok: false, message: error.message, cause: error };
    throw error;
  }
  if (backend !== undefined && backend !== 'redis')
    return { ok: false, message: `the ${backend} backend is not served by this command yet` };
  const parsed = parseRedisUrl(raw);
  return parsed.ok ? { ok: true, backend: 'redis', url: parsed.url } : parsed;
}
