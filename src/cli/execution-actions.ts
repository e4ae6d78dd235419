/**
 * The actions of `ts-reactor executions`, as data: `cancel`, `retry`, `undo` and `resume`. Each
 * names its usage, its own options, the statuses it applies to and how it calls the engine; the
 * command (`executions.ts`) checks the status, asks for confirmation and prints the outcome, so a
 * new action is one more entry of {@link EXECUTION_ACTIONS}.
 *
 * @module
 */
import type { Engine } from '../engine/engine.js';
import type { RunResult } from '../engine/model/results.js';
import { EXECUTION_STATUSES, TERMINAL_STATUSES, type ExecutionStatus } from '../ports/store.js';
import type { ExecutionDetail } from '../ops/types.js';
import { UsageError } from './worker.js';

/** Options as `node:util` `parseArgs` takes them. */
export type OptionSpecs = Readonly<
  Record<string, { readonly type: 'string' | 'boolean'; readonly short?: string; readonly multiple?: boolean }>
>;

/** The parsed options an action reads its own from. */
export type OptionValues = Readonly<Record<string, string | boolean | readonly (string | boolean)[] | undefined>>;

/** What an action does once confirmed: calls the engine on execution `id`. */
export type Perform = (engine: Engine, id: string) => Promise<RunResult>;

/** One action on one execution (`executions <name> <id> [options]`). */
export interface ExecutionActionCommand {
  readonly kind: 'action';
  /** The arguments after `executions <name> <id>`, for the usage text. */
  readonly usage: string;
  /** One line: what it does (usage text, and the question asked before it runs). */
  readonly summary: string;
  /** Its own options (besides the connection ones, `--module`, `--queue` and `--yes`). */
  readonly options: OptionSpecs;
  /** The statuses it applies to: any other is refused with `ExecutionStateError` before anything is asked or done. */
  readonly appliesTo: readonly ExecutionStatus[];
  /** Said when the status does not fit (what to do instead). */
  readonly hint: string;
  /** The question asked before it runs (answered with y, or skipped by `--yes`). */
  question(execution: ExecutionDetail): string;
  /** Reads its options (a {@link UsageError} on a bad one, before anything is connected) and returns what it does. */
  prepare(values: OptionValues): Perform;
  /** The line printed once it has run. */
  done(id: string, result: RunResult): string;
}

const UNFINISHED = EXECUTION_STATUSES.filter((s) => !TERMINAL_STATUSES.has(s));
const REASON = ' requested from the command line';
const reasonOf = (values: OptionValues, name: string): string =>
  typeof values['reason'] === 'string' && values['reason'] !== '' ? values['reason'] : `${name}${REASON}`;
const who = (e: ExecutionDetail): string => `execution ${e.id} (${e.reactor}, ${e.status})`;
const became = (result: RunResult): string =>
  `execution ${result.executionId} is ${result.status}${result.status === 'failed' ? `: ${result.error.message}` : ''}`;

/**
 * What becomes of a cancel request for an execution another process runs (the engine's cancel
 * path: the request is recorded and announced; the process running it aborts the run's signal,
 * undoes what completed and ends it `cancelled`; a job that takes it later reads the request).
 */
export const CANCEL_REQUESTED =
  'the process running it is told now and rolls it back: no new step starts, the steps in flight see their signal aborted, the completed steps are undone, and it ends cancelled (a job that takes it up later finds the request too)';

const cancel: ExecutionActionCommand = {
  kind: 'action',
  usage: '[--reason <text>]',
  summary: 'stop an unfinished execution; its completed steps are undone, newest first',
  options: { reason: { type: 'string' } },
  appliesTo: UNFINISHED,
  hint: 'only an unfinished execution can be cancelled (undo a completed one)',
  question: (e) => `Cancel ${who(e)} and undo its completed steps?`,
  prepare: (values) => (engine, id) => engine.cancel(id, { reason: reasonOf(values, 'cancel') }),
  done: (id, result) =>
    result.status === 'cancelled'
      ? `cancelled: ${became(result)}`
      : `cancel requested: execution ${id} is ${result.status}; ${CANCEL_REQUESTED} (ts-reactor executions show ${id})`,
};

const retry: ExecutionActionCommand = {
  kind: 'action',
  usage: '',
  summary: 'run a failed, halted, cancelled or aborted execution again, as a new linked one',
  options: {},
  appliesTo: ['failed', 'halted', 'cancelled', 'aborted'],
  hint: 'only a failed, halted, cancelled or aborted execution can be retried',
  question: (e) => `Retry ${who(e)} as a new execution with the same input?`,
  prepare: () => (engine, id) => engine.retry(id),
  done: (id, result) => `retried ${id} as ${became(result)}`,
};

const undo: ExecutionActionCommand = {
  kind: 'action',
  usage: '[--reason <text>]',
  summary: 'undo every completed step of a completed execution, newest first',
  options: { reason: { type: 'string' } },
  appliesTo: ['completed'],
  hint: 'only a completed execution can be undone (cancel one that is still going)',
  question: (e) => `Undo ${who(e)}? Every completed step's undo runs, newest first.`,
  prepare: (values) => (engine, id) => engine.undo(id, { reason: reasonOf(values, 'undo') }),
  done: (_id, result) => `undone: ${became(result)}`,
};

const resume: ExecutionActionCommand = {
  kind: 'action',
  usage: '--payload <json> [--step <path>]',
  summary: "answer a paused execution's interrupt with a JSON payload; the run goes on",
  options: { payload: { type: 'string' }, step: { type: 'string' } },
  appliesTo: ['paused'],
  hint: 'only a paused execution waits at an interrupt',
  question: (e) =>
    `Resume ${who(e)} at ${(e.interrupts ?? []).map((i) => i.step).join(' or ') || 'its interrupt'} with this payload?`,
  prepare: (values) => {
    const raw = values['payload'];
    if (typeof raw !== 'string') throw new UsageError('executions resume: missing --payload <json>', false);
    let payload: unknown;
    try {
      payload = JSON.parse(raw);
    } catch (error) {
      throw new UsageError(`--payload is not JSON: ${(error as Error).message}`, false);
    }
    const step = values['step'];
    return (engine, id) => engine.resume(id, payload, typeof step === 'string' ? { step } : {});
  },
  done: (_id, result) => `resumed: ${became(result)}`,
};

/** The actions of `ts-reactor executions`, by subcommand name. */
export const EXECUTION_ACTIONS: Readonly<Record<string, ExecutionActionCommand>> = Object.freeze({
  cancel,
  retry,
  undo,
  resume,
});
