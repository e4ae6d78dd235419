/**
 * The authorization hook: a function the user passes, asked before every route with what the
 * request wants to do. `true` allows, `false` answers 403, `'unauthenticated'` answers 401.
 *
 * @module
 */
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';

/** What a request wants to do. */
export type DashboardPermission =
  | {
      readonly kind: 'view';
      readonly page: 'executions' | 'execution' | 'coordination' | 'schedules' | 'queue' | 'events';
    }
  | {
      readonly kind: 'action';
      readonly action: string;
      readonly target:
        | { readonly type: 'execution'; readonly id: string }
        | { readonly type: 'ordered-lock'; readonly key: string }
        | { readonly type: 'schedule'; readonly id: string };
    };

/** The verdict of an {@link Authorize} hook. */
export type AuthorizeResult = boolean | 'unauthenticated';

/**
 * Decides whether a request may proceed. Called for every page, API call, confirm page and action.
 *
 * @example
 * ```ts
 * const authorize: Authorize = (c, permission) => {
 *   const user = sessionOf(c);
 *   if (!user) return 'unauthenticated';
 *   return permission.kind === 'view' || user.roles.includes('operator');
 * };
 * ```
 */
export type Authorize = (c: Context, permission: DashboardPermission) => AuthorizeResult | Promise<AuthorizeResult>;

/** Runs the hook; throws a 401 or 403 {@link HTTPException} when it refuses. */
export async function guard(
  authorize: Authorize | undefined,
  c: Context,
  permission: DashboardPermission,
): Promise<void> {
  if (!authorize) return;
  const verdict = await authorize(c, permission);
  if (verdict === true) return;
  if (verdict === 'unauthenticated') throw new HTTPException(401, { message: 'authentication required' });
  throw new HTTPException(403, { message: `not allowed: ${describe(permission)}` });
}

function describe(permission: DashboardPermission): string {
  if (permission.kind === 'view') return `view ${permission.page}`;
  const target =
    permission.target.type === 'ordered-lock'
      ? `ordered lock ${permission.target.key}`
      : `${permission.target.type} ${permission.target.id}`;
  return `${permission.action} on ${target}`;
}
