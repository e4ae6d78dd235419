/**
 * Which backend a URL names, by its scheme: the one table the command line, the dashboard and
 * the readiness checks consult. A backend is added here with its schemes (Redis: `redis:`,
 * `rediss:`; PostgreSQL: `postgres:`, `postgresql:`); a scheme that names a backend not available
 * in this build, or no backend, is a `BackendUnavailableError`.
 *
 * @module
 */
import { BackendUnavailableError } from '../errors.js';

/** The backends a URL may name. */
export type BackendKind = 'redis' | 'postgres';

/** One row of {@link BACKEND_SCHEMES}: the backend a scheme names, and whether this build serves it. */
export interface BackendScheme {
  readonly backend: BackendKind;
  readonly available: boolean;
}

/** Each URL scheme (with its colon, as `URL.protocol` gives it) and the backend it names. */
export const BACKEND_SCHEMES: Readonly<Record<string, BackendScheme>> = Object.freeze({
  'redis:': { backend: 'redis', available: true },
  'rediss:': { backend: 'redis', available: true },
  'postgres:': { backend: 'postgres', available: true },
  'postgresql:': { backend: 'postgres', available: true },
});

/** The schemes of the backends this build serves, in table order. */
export function availableSchemes(): string[] {
  return Object.entries(BACKEND_SCHEMES)
    .filter(([, row]) => row.available)
    .map(([scheme]) => scheme);
}

/**
 * The backend `raw` names by its scheme; undefined when `raw` is not a URL at all (the
 * backend's own URL check then says why).
 *
 * @throws BackendUnavailableError when the scheme names a backend this build does not serve, or none.
 * @example
 * ```ts
 * backendOfUrl('rediss://cache:6380'); // 'redis'
 * backendOfUrl('postgres://db/app');   // 'postgres'
 * backendOfUrl('http://cache:6379');  // throws BackendUnavailableError (backend_unavailable)
 * ```
 */
export function backendOfUrl(raw: string): BackendKind | undefined {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    return undefined;
  }
  const row = Object.hasOwn(BACKEND_SCHEMES, parsed.protocol) ? BACKEND_SCHEMES[parsed.protocol] : undefined;
  if (row?.available === true) return row.backend;
  throw new BackendUnavailableError(
    { scheme: parsed.protocol, ...(row === undefined ? {} : { backend: row.backend }), available: availableSchemes() },
    redacted(raw, parsed),
  );
}

/** `raw` as it may be printed: as given, or with its password replaced by `***`. */
function redacted(raw: string, url: URL): string {
  if (url.password === '') return raw;
  const copy = new URL(url.href);
  copy.password = '***';
  return copy.href;
}
