/**
 * Cross-site request refusal for every state-changing request: a browser on another site must
 * not be able to post an action form (or a `text/plain` body shaped like JSON) with the
 * operator's cookies. Requests without browser provenance headers (curl, scripts) pass; the
 * `authorize` hook still applies to them.
 *
 * @module
 */
import type { MiddlewareHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';

/** Why a request looks cross-site, `undefined` when it does not. */
export function crossSiteReason(headers: { get(name: string): string | null }): string | undefined {
  const site = headers.get('sec-fetch-site');
  if (site === 'cross-site' || site === 'same-site') return `a ${site} request`;
  const origin = headers.get('origin');
  if (origin === null) return undefined;
  if (origin === 'null') return 'an opaque origin';
  const host = headers.get('x-forwarded-host') ?? headers.get('host');
  let originHost: string;
  try {
    originHost = new URL(origin).host;
  } catch {
    return `a malformed origin ${origin}`;
  }
  return host !== null && originHost !== host ? `origin ${origin} is not this dashboard's (${host})` : undefined;
}

/** Refuses a non-GET request that comes from another site with 403. */
export const sameOriginOnly: MiddlewareHandler = async (c, next) => {
  if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
    const reason = crossSiteReason(c.req.raw.headers);
    if (reason !== undefined) throw new HTTPException(403, { message: `cross-site action refused: ${reason}` });
  }
  await next();
};
