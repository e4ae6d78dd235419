/**
 * An execution action's confirm page, and what happens when a submission has a problem the
 * operator can fix (a missing or malformed field, a payload the interrupt's schema refuses): the
 * confirm page comes back with the typed error's message and the values as submitted, so the
 * page never breaks and nothing else changed.
 *
 * @module
 */
import { ReactorError } from '../errors.js';
import type { ExecutionDetail } from '../ops/types.js';
import type { ExecutionAction } from './actions.js';
import { confirmPage } from './html/confirm-page.js';
import type { Fragment } from './html/format.js';
import type { PageContext } from './html/layout.js';

/** Error codes that send the operator back to the confirm page, with their HTTP status. */
const FIXABLE: Readonly<Record<string, 400 | 422>> = { action_invalid: 400, resume_payload_invalid: 422 };

/** The status of a submission problem the confirm page can show; `undefined` for any other error. */
export function problemStatus(error: unknown): 400 | 422 | undefined {
  return ReactorError.is(error) ? FIXABLE[error.code] : undefined;
}

/** The values of the action's fields found in `source` (a query string or a posted form), as text. */
export function fieldValues(
  action: ExecutionAction,
  source: Readonly<Record<string, unknown>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const field of action.fields ?? []) {
    const value = source[field.name];
    if (typeof value === 'string') out[field.name] = value;
  }
  return out;
}

/** The confirm page of an execution action, with a previous submission's problem and values. */
export function executionConfirm(
  pc: PageContext,
  prepared: { readonly action: ExecutionAction; readonly execution: ExecutionDetail },
  extra: { readonly problem?: string; readonly values?: Readonly<Record<string, string>> },
): Fragment {
  const { action, execution } = prepared;
  const self = `${pc.base}/executions/${encodeURIComponent(execution.id)}`;
  return confirmPage(pc, {
    title: `${action.label} execution ${execution.id}?`,
    description: action.description,
    action: `${self}/actions/${action.name}`,
    back: self,
    label: `Yes, ${action.label.toLowerCase()}`,
    danger: action.danger ?? false,
    fields: action.fields ?? [],
    nav: 'executions',
    ...(extra.problem === undefined ? {} : { problem: extra.problem }),
    ...(extra.values === undefined ? {} : { values: extra.values }),
  });
}
