/**
 * Performing an action, shared by the confirm pages and the JSON API: find it, ask the
 * authorization hook, refuse in read-only mode, check it applies, read its fields, do it, and
 * report it to the `onAction` audit hook.
 *
 * @module
 */
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { Engine } from '../engine/engine.js';
import { ExecutionNotFoundError, ExecutionStateError, ReactorError } from '../errors.js';
import type { ReadModel } from '../ops/read-model.js';
import type { ExecutionDetail, OrderedView } from '../ops/types.js';
import type { ActionField, ExecutionAction, OrderedLockAction } from './actions.js';
import { guard, type Authorize } from './auth.js';

/** One action an operator performed, as reported to `onAction`. */
export interface ActionRecord {
  readonly action: string;
  readonly target:
    { readonly type: 'execution'; readonly id: string } | { readonly type: 'ordered-lock'; readonly key: string };
  /** Wall-clock time (ms). */
  readonly at: number;
  /** The execution shown next (retry: the new one), or the ordered lock's state after. */
  readonly outcome: { readonly executionId: string; readonly status: string } | OrderedView;
}

/** What performing needs. */
export interface PerformDeps {
  readonly engine: Engine;
  readonly model: ReadModel;
  readonly authorize: Authorize | undefined;
  readonly readOnly: boolean;
  readonly executionActions: readonly ExecutionAction[];
  readonly orderedActions: readonly OrderedLockAction[];
  readonly onAction: ((record: ActionRecord) => void) | undefined;
}

/** The execution action `name` on execution `id`, checked and authorized, ready to confirm or perform. */
export async function prepareExecutionAction(
  deps: PerformDeps,
  c: Context,
  id: string,
  name: string,
): Promise<{ action: ExecutionAction; execution: ExecutionDetail }> {
  const action = deps.executionActions.find((a) => a.name === name);
  if (!action) throw new HTTPException(404, { message: `no action named "${name}"` });
  await guard(deps.authorize, c, { kind: 'action', action: name, target: { type: 'execution', id } });
  if (deps.readOnly) throw new HTTPException(403, { message: 'the dashboard is read-only' });
  const execution = await deps.model.execution(id);
  if (!execution) throw new ExecutionNotFoundError(id);
  if (!action.appliesTo(execution))
    throw new ExecutionStateError(
      id,
      name,
      execution.status,
      `"${action.label}" does not apply to an execution that is ${execution.status}`,
    );
  return { action, execution };
}

/** Performs a prepared execution action with the submitted field values. */
export async function performExecutionAction(
  deps: PerformDeps,
  prepared: { action: ExecutionAction; execution: ExecutionDetail },
  raw: Readonly<Record<string, unknown>>,
): Promise<{ executionId: string; status: string }> {
  const { action, execution } = prepared;
  const fields = readFields(action.fields ?? [], raw);
  const result = await action.perform({
    engine: deps.engine,
    execution,
    fields,
    reason: `${action.name} requested from the dashboard`,
  });
  const outcome = { executionId: result.executionId, status: result.status };
  deps.onAction?.({ action: action.name, target: { type: 'execution', id: execution.id }, at: Date.now(), outcome });
  return outcome;
}

/** The ordered-lock action `name`, authorized, ready to confirm or perform. */
export async function prepareOrderedAction(
  deps: PerformDeps,
  c: Context,
  key: string | undefined,
  name: string,
): Promise<{ action: OrderedLockAction; key: string }> {
  const action = deps.orderedActions.find((a) => a.name === name);
  if (!action) throw new HTTPException(404, { message: `no ordered-lock action named "${name}"` });
  if (key === undefined || key === '') throw new ReactorError('query_invalid', 'missing ?key=<ordered-lock key>');
  await guard(deps.authorize, c, { kind: 'action', action: name, target: { type: 'ordered-lock', key } });
  if (deps.readOnly) throw new HTTPException(403, { message: 'the dashboard is read-only' });
  return { action, key };
}

/** Performs a prepared ordered-lock action. */
export async function performOrderedAction(
  deps: PerformDeps,
  prepared: { action: OrderedLockAction; key: string },
): Promise<OrderedView> {
  const after = await prepared.action.perform(deps.model, prepared.key);
  deps.onAction?.({
    action: prepared.action.name,
    target: { type: 'ordered-lock', key: prepared.key },
    at: Date.now(),
    outcome: after,
  });
  return after;
}

/** Checks required fields and parses JSON ones. @throws ReactorError `action_invalid`. */
function readFields(fields: readonly ActionField[], raw: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of fields) {
    const value = raw[field.name];
    const empty = value === undefined || value === '';
    if (empty && field.required)
      throw new ReactorError('action_invalid', `${field.label} is required`, { details: { field: field.name } });
    if (empty) continue;
    if (field.kind === 'json' && typeof value === 'string') {
      try {
        out[field.name] = JSON.parse(value);
      } catch (error) {
        throw new ReactorError('action_invalid', `${field.label} is not valid JSON: ${(error as Error).message}`, {
          cause: error,
          details: { field: field.name },
        });
      }
    } else out[field.name] = value;
  }
  return out;
}
