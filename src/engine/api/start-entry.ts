/**
 * What `engine.start` and each `engine.startMany` entry are given, checked before anything is
 * written (docs/decisions/115): the entry an object, its reactor a built definition (not a name),
 * its options an object; and the size of the first record a start writes, measured the way the
 * stores measure it, so that a `startMany` entry over the limit is refused before any entry is
 * written.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import { RecordTooLargeError, StartOptionsError } from '../../errors.js';
import { plannedJob } from '../jobs/start.js';
import type { StartPlan } from '../model/background.js';
import { stampFields } from '../run/run-state.js';
import { RECORD_VERSION, type ExecutionRecord, type Store } from '../../ports/store.js';
import { shown } from './start-options.js';
import { isReactor } from './results.js';

/** `reactor` as a built definition; `start_options_invalid` (option `reactor`) for a name, nothing or another value. */
export function checkStartReactor(reactor: unknown, entry?: number): AnyReactorDefinition {
  if (isReactor(reactor)) return reactor;
  const given = typeof reactor === 'string' ? `the name ${JSON.stringify(reactor)}` : shownValue(reactor);
  throw new StartOptionsError(
    { option: 'reactor', value: given, ...(entry === undefined ? {} : { entry }) },
    'must be a built reactor definition (reactor(...).build() or .returns(...)); a name is not enough',
  );
}

/** A `startMany` entry as `{ reactor, input, options? }`; `start_options_invalid` naming the entry otherwise. */
export function checkEntry(entry: unknown, index: number): { reactor: unknown; input: unknown; options: object } {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
    throw new StartOptionsError(
      { option: 'entry', value: shownValue(entry), entry: index },
      'must be an object { reactor, input, options? }',
    );
  const { reactor, input, options } = entry as { reactor?: unknown; input?: unknown; options?: unknown };
  return { reactor, input, options: checkOptionsObject(options, index) };
}

/** Start options as an object (absent: none); `start_options_invalid` (option `options`) for another value. */
export function checkOptionsObject(options: unknown, entry?: number): object {
  if (options === undefined) return {};
  if (typeof options === 'object' && options !== null && !Array.isArray(options)) return options;
  throw new StartOptionsError(
    { option: 'options', value: shownValue(options), ...(entry === undefined ? {} : { entry }) },
    'must be an object of start options',
  );
}

/** The entries of `startMany` as an array; `start_options_invalid` (option `entries`) otherwise. */
export function checkEntries(entries: unknown): readonly unknown[] {
  if (Array.isArray(entries)) return entries;
  throw new StartOptionsError(
    { option: 'entries', value: shownValue(entries) },
    'must be an array of { reactor, input, options? }',
  );
}

/** What a start's first record is measured from. */
export interface FirstRecord {
  readonly reactor: AnyReactorDefinition;
  readonly executionId: string;
  readonly input: Record<string, unknown>;
  readonly plan: StartPlan;
  readonly idempotencyKey?: string | undefined;
  readonly now: number;
}

/**
 * Throws {@link RecordTooLargeError} (with `details.entry`) when the first record of the start
 * `first` is over `store`'s `maxRecordBytes`: the pending record a background start writes, with
 * its first trace entry (`run.queued`), measured as the stores do (UTF-8 bytes of its JSON). A
 * store that does not say its limit is left to refuse the write itself.
 */
export function checkFirstRecordSize(store: Pick<Store, 'maxRecordBytes'>, first: FirstRecord, entry: number): void {
  const limit = store.maxRecordBytes;
  if (limit === undefined) return;
  const json = JSON.stringify(firstRecord(first));
  const bytes = json.length * 3 <= limit ? json.length : Buffer.byteLength(json); // UTF-8: at most 3 bytes per UTF-16 unit
  if (bytes > limit) throw new RecordTooLargeError(first.executionId, bytes, limit, undefined, entry);
}

/** The pending record a background start writes first (its trace the `run.queued` entry). */
function firstRecord(first: FirstRecord): ExecutionRecord {
  const { reactor, executionId: id, input, plan, idempotencyKey, now } = first;
  return {
    v: RECORD_VERSION,
    id,
    rootId: id,
    reactor: reactor.name,
    ...stampFields(reactor),
    status: 'pending',
    input,
    steps: {},
    rollbackFailures: [],
    ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    ...(plan.tags === undefined ? {} : { tags: plan.tags }),
    background: plannedJob(plan),
    trace: [
      {
        reactor: reactor.name,
        type: 'run.queued',
        jobId: `${id}:1`,
        delayMs: plan.delayMs,
        reason: 'start',
        executionId: id,
        rootExecutionId: id,
        at: now,
      },
    ],
    createdAt: now,
    updatedAt: now,
  };
}

/** A value given where an entry, a reactor or options belong, as text. */
function shownValue(value: unknown): string {
  if (value === null || value === undefined || typeof value !== 'object') return shown(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}
