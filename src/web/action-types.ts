/**
 * The shapes of the operator actions (`ExecutionAction`, `OrderedLockAction` and their fields),
 * apart from the built-in lists in `actions.ts` so that an action defined in a file of its own
 * (`resume-action.ts`) needs only these types.
 *
 * @module
 */
import type { Engine } from '../engine/engine.js';
import type { ExecutionDetail, ExecutionSummary, OrderedView } from '../ops/types.js';
import type { ReadModel } from '../ops/read-model.js';

/** A form field an action asks for on its confirm page (and in its API body). */
export interface ActionField {
  readonly name: string;
  readonly label: string;
  /** `json`: the value is parsed as JSON before `perform` sees it. */
  readonly kind: 'text' | 'json';
  readonly required?: boolean;
}

/** What an execution action's `perform` receives. */
export interface ExecutionActionContext {
  readonly engine: Engine;
  readonly execution: ExecutionDetail;
  /** The field values (JSON fields parsed). */
  readonly fields: Readonly<Record<string, unknown>>;
  /** A reason naming the dashboard, recorded in the trace by actions that take one. */
  readonly reason: string;
}

/** An action on one execution. */
export interface ExecutionAction {
  readonly name: string;
  readonly label: string;
  /** Shown on the confirm page. */
  readonly description: string;
  readonly danger?: boolean;
  /** Whether the action is offered for this execution. */
  appliesTo(execution: ExecutionSummary): boolean;
  readonly fields?: readonly ActionField[];
  /** Does it; resolves with the execution to show next (the same one, or a new linked one). */
  perform(context: ExecutionActionContext): Promise<{ readonly executionId: string; readonly status: string }>;
}

/** An action on one ordered-lock key. */
export interface OrderedLockAction {
  readonly name: string;
  readonly label: string;
  readonly description: string;
  readonly danger?: boolean;
  perform(model: ReadModel, key: string): Promise<OrderedView>;
}
