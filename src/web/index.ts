/**
 * `ts-reactor/web`: the dashboard (a Hono app with server-rendered pages, a JSON API and working
 * actions) and the read model it is built on.
 *
 * @module
 */
export { createDashboard, normalizeBasePath, type DashboardOptions } from './dashboard.js';
export {
  executionActions,
  orderedLockActions,
  type ActionField,
  type ExecutionAction,
  type ExecutionActionContext,
  type OrderedLockAction,
} from './actions.js';
export { resumeAction } from './resume-action.js';
export {
  createReadToken,
  verifyReadToken,
  MIN_READ_TOKEN_SECRET_LENGTH,
  type ReadTokenOptions,
  type ReadTokenRefusal,
  type ReadTokenVerdict,
} from './read-token.js';
export type { Authorize, AuthorizeResult, DashboardPermission } from './auth.js';
export type { ActionRecord } from './perform.js';
export type { DashboardMetrics, DashboardReadiness, DashboardReadinessCheck } from './ops-routes.js';
export type { BulkOutcome } from './html/bulk-page.js';
export type { QueueInspector, QueueJobView, QueueSnapshot, QueueWorkerView } from '../ports/queue-inspector.js';
export * from '../ops/index.js';
