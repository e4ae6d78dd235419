/**
 * What every route of the dashboard shares.
 *
 * @module
 */
import type { ReadModel } from '../ops/read-model.js';
import type { Authorize } from './auth.js';
import type { PageContext } from './html/layout.js';
import type { PerformDeps } from './perform.js';

/** The dashboard's wiring, built once by `createDashboard`. */
export interface DashboardContext {
  readonly model: ReadModel;
  readonly authorize: Authorize | undefined;
  readonly readOnly: boolean;
  readonly page: PageContext;
  readonly perform: PerformDeps;
}
