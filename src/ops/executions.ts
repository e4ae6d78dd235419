/**
 * Executions as operators see them: a filtered, paginated list and one execution in full
 * (redacted input, steps and attempts, graph, trace, what it waits for, linked executions).
 *
 * @module
 */
import type { AnyReactorDefinition } from '../dsl/definition.js';
import { redactFields } from '../dsl/contract.js';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '../engine/api/list.js';
import { pendingStartOf, priorityOf } from '../engine/model/background.js';
import type { Coordinator } from '../ports/coordinator.js';
import {
  statusName,
  storedStatus,
  TERMINAL_STATUSES,
  type ExecutionRecord,
  type FailurePause,
  type Store,
} from '../ports/store.js';
import { ListFilterError, ReactorError, type ErrorJSON } from '../errors.js';
import { interruptViews } from './interrupts.js';
import { graphOf, lastContendedStep, stepViews } from './steps.js';
import { shownDefinition } from './versions.js';
import type {
  ExecutionDetail,
  ExecutionPage,
  ExecutionQuery,
  ExecutionSummary,
  HolderView,
  WaitView,
} from './types.js';

/** What the execution views read. */
export interface ExecutionSources {
  readonly store: Store;
  readonly coordinator: Coordinator | undefined;
  readonly reactors: ReadonlyMap<string, AnyReactorDefinition>;
  /** Every given definition by fingerprint: an execution is drawn from its own version's. */
  readonly versions?: ReadonlyMap<string, AnyReactorDefinition>;
  /** How many of the newest records are searched for linked executions. */
  readonly scanLimit: number;
}

/** An error without its stack (and its causes' stacks): views never expose them. */
export function withoutStack(error: ErrorJSON): ErrorJSON {
  const { stack: _stack, cause, ...rest } = error;
  return cause === undefined ? rest : { ...rest, cause: withoutStack(cause) };
}

/** The list line of a record (with the definition, a paused one's interrupts show their `maxAttempts`). */
export function summaryOf(record: ExecutionRecord, definition?: AnyReactorDefinition): ExecutionSummary {
  const interrupts = interruptViews(record, definition);
  const failedError = record.error
    ? {
        error: {
          name: record.error.name,
          message: record.error.message,
          ...(record.error.code === undefined ? {} : { code: record.error.code }),
        },
      }
    : {};
  return {
    id: record.id,
    reactor: record.reactor,
    ...(record.fingerprint === undefined ? {} : { fingerprint: record.fingerprint }),
    ...(record.version === undefined ? {} : { version: record.version }),
    ...(record.background?.waitingForVersion === undefined || TERMINAL_STATUSES.has(record.status)
      ? {}
      : { waitingForVersion: record.background.waitingForVersion }),
    status: statusName(record.status),
    ...(record.tags === undefined ? {} : { tags: record.tags }),
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    ...(record.failedStep === undefined ? {} : { failedStep: record.failedStep }),
    ...failedError,
    ...(record.status === 'parked' && record.background?.waitingFor
      ? { waitingFor: record.background.waitingFor }
      : {}),
    ...(record.parentId === undefined ? {} : { parentId: record.parentId }),
    ...(record.retryOf === undefined ? {} : { retryOf: record.retryOf }),
    ...(interrupts.length === 0 ? {} : { interrupts }),
    ...(record.status === 'paused' && record.pausedOn ? { pausedOn: failureView(record.pausedOn) } : {}),
    ...pendingStartOf(record),
    ...priorityOf(record.background),
  };
}

/** A failure pause as the views show it: the error without its stack. */
function failureView(pause: FailurePause): FailurePause {
  const { name, message, code } = pause.error;
  return { ...pause, error: { name, message, ...(code === undefined ? {} : { code }) } };
}

/** One page of executions, newest first. @throws ReactorError `query_invalid` on a bad limit or range. */
export async function listExecutions(
  sources: Pick<ExecutionSources, 'store'>,
  query: ExecutionQuery = {},
): Promise<ExecutionPage> {
  const limit = query.limit ?? DEFAULT_LIST_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT)
    throw new ReactorError(
      'query_invalid',
      `limit must be an integer from 1 to ${MAX_LIST_LIMIT}; got ${String(limit)}`,
      {
        details: { limit },
      },
    );
  for (const [name, value] of [
    ['from', query.from],
    ['to', query.to],
  ] as const) {
    if (value !== undefined && !Number.isFinite(value))
      throw new ReactorError('query_invalid', `${name} must be a time in ms; got ${String(value)}`, {
        details: { [name]: value },
      });
  }
  const page = await sources.store
    .list({
      limit,
      ...(query.reactor === undefined ? {} : { reactor: query.reactor }),
      ...(query.status === undefined ? {} : { status: storedStatus(query.status) }),
      ...(query.from === undefined ? {} : { createdFrom: query.from }),
      ...(query.to === undefined ? {} : { createdTo: query.to }),
      ...(query.tags === undefined ? {} : { tags: query.tags }),
      ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
    })
    .catch((error: unknown) => {
      if (error instanceof RangeError || error instanceof ListFilterError)
        throw new ReactorError('query_invalid', error.message, { cause: error });
      throw error;
    });
  return {
    items: page.records.map((r) => summaryOf(r)),
    ...(page.cursor === undefined ? {} : { cursor: page.cursor }),
  };
}

/** One execution in full; `undefined` when there is no such record. */
export async function executionDetail(sources: ExecutionSources, id: string): Promise<ExecutionDetail | undefined> {
  const record = await sources.store.get(id);
  if (!record) return undefined;
  const own = shownDefinition({ byName: sources.reactors, byFingerprint: sources.versions ?? new Map() }, record);
  const definition = own.definition ?? sources.reactors.get(record.reactor);
  const shown = shownInput(record, definition);
  const waiting = record.status === 'parked' ? await waitView(sources.coordinator, record) : undefined;
  return {
    ...summaryOf(record, definition),
    rootId: record.rootId,
    ...shown,
    ...(record.value === undefined ? {} : { value: record.value }),
    ...(record.error === undefined ? {} : { error: withoutStack(record.error) }),
    ...(record.haltReason === undefined ? {} : { haltReason: record.haltReason }),
    ...(record.haltData === undefined ? {} : { haltData: record.haltData }),
    ...(record.cancelReason === undefined ? {} : { cancelReason: record.cancelReason }),
    ...(record.idempotencyKey === undefined ? {} : { idempotencyKey: record.idempotencyKey }),
    steps: stepViews(record),
    graph: graphOf(own.record, own.definition, own.source),
    trace: record.trace ?? [],
    rollbackFailures: record.rollbackFailures,
    ...(record.progress === undefined ? {} : { progress: record.progress }),
    ...(waiting === undefined ? {} : { waiting }),
    links: await linksOf(sources, record.id),
  };
}

/**
 * The input with secrets hidden: by the reactor's contract when it is registered, else by the
 * redacted copy in the trace's `run.started` event; withheld when neither exists.
 */
export function shownInput(
  record: ExecutionRecord,
  definition: AnyReactorDefinition | undefined,
): Pick<ExecutionDetail, 'input' | 'redacted' | 'inputHidden'> {
  if (definition)
    return {
      input: redactFields(definition.contract, record.input),
      redacted: definition.contract.redact,
      inputHidden: false,
    };
  const started = record.trace?.find((e) => e.type === 'run.started');
  if (started?.type !== 'run.started') return { input: undefined, redacted: [], inputHidden: true };
  const input = started.input;
  const redacted =
    typeof input === 'object' && input !== null
      ? Object.entries(input)
          .filter(([, v]) => v === '[redacted]')
          .map(([k]) => k)
      : [];
  return { input, redacted, inputHidden: false };
}

/** What a parked execution waits for, and who holds that key now. */
async function waitView(coordinator: Coordinator | undefined, record: ExecutionRecord): Promise<WaitView | undefined> {
  const waitingFor = record.background?.waitingFor;
  if (!waitingFor) return undefined;
  const step = waitingFor.step ?? lastContendedStep(record.trace ?? []);
  const holders: HolderView[] = [];
  if (coordinator && waitingFor.primitive === 'lock') {
    const state = await coordinator.lockState(waitingFor.key);
    if (state) holders.push(holderView(state.holder));
  } else if (coordinator && waitingFor.primitive === 'semaphore') {
    holders.push(...(await coordinator.semaphoreState(waitingFor.key)).holders.map((h) => holderView(h.holder)));
  }
  return { waitingFor, ...(step === undefined ? {} : { step }), holders };
}

/** A holder as shown: step level when a step declared it, else reactor level. */
export function holderView(holder: {
  readonly owner: string;
  readonly executionId?: string;
  readonly reactor?: string;
  readonly step?: string;
}): HolderView {
  return { ...holder, level: holder.step === undefined ? 'reactor' : 'step' };
}

/** Children (by `parentId`) and retries (by `retryOf`) among the newest `scanLimit` records. */
async function linksOf(sources: ExecutionSources, id: string): Promise<ExecutionDetail['links']> {
  const children: ExecutionSummary[] = [];
  const retries: ExecutionSummary[] = [];
  let cursor: string | undefined;
  let seen = 0;
  do {
    const page = await sources.store.list({
      limit: Math.min(200, sources.scanLimit - seen),
      ...(cursor === undefined ? {} : { cursor }),
    });
    for (const record of page.records) {
      if (record.parentId === id && record.id !== id) children.push(summaryOf(record));
      if (record.retryOf === id) retries.push(summaryOf(record));
    }
    seen += page.records.length;
    cursor = page.cursor;
  } while (cursor !== undefined && seen < sources.scanLimit);
  return { children, retries };
}
