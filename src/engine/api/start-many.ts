/**
 * `engine.startMany`: many background starts in one call (docs/decisions/079, 115). Every entry
 * is checked before anything is written: what `start` would throw for it (its shape, its
 * reactor, its options and tags, a first record over the size limit) rejects the call naming the
 * entry, and nothing of any entry is written; what `start` would return `failed` (an input too
 * deep or that fails its contract) is that entry's result, and the others are started. Then the
 * valid entries are written and their first jobs enqueued in one bulk call.
 *
 * @module
 */
import { validateContract } from '../../dsl/contract.js';
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import { invalidInput } from '../execution/execute.js';
import { startManyBackground, type BulkStart } from '../jobs/start-many.js';
import type { StartPlan } from '../model/background.js';
import { inputShapeIssue } from '../model/input-shape.js';
import type { RunResult } from '../model/results.js';
import type { AcceptDeps } from './accept.js';
import { needQueue, type EngineParts } from './parts.js';
import { needDebounceSlots } from './start-debounce.js';
import { checkEntries, checkEntry, checkFirstRecordSize, checkStartReactor } from './start-entry.js';
import { startReactor } from './start.js';
import { startPlan } from './start-options.js';
import type { StartEntry, StartOptions } from './types.js';

/** What one checked entry comes to: its result already (an invalid input), a start of its own, or a bulk start. */
type Checked =
  | { readonly kind: 'invalid'; readonly reactor: AnyReactorDefinition; readonly result: RunResult }
  | { readonly kind: 'alone'; readonly reactor: AnyReactorDefinition; readonly entry: StartEntry }
  | { readonly kind: 'bulk'; readonly bulk: BulkStart };

/** Starts every entry (see `Engine.startMany`); resolves with one result per entry, in order. */
export async function startManyReactors(
  deps: AcceptDeps & Pick<EngineParts, 'background' | 'clock' | 'operations'>,
  entries: readonly StartEntry[],
): Promise<RunResult[]> {
  const list = checkEntries(entries);
  const background = needQueue(deps);
  const now = deps.clock.now();
  // Nothing is written until every entry has passed (a throw here leaves the stores untouched).
  const settled = await Promise.allSettled(list.map((entry, i) => check(deps, background.store, entry, i, now)));
  const refused = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (refused) throw refused.reason; // the first refused entry, in entry order
  const checked = settled.map((s) => (s as PromiseFulfilledResult<Checked>).value);
  for (const c of checked) deps.registry.register(c.kind === 'bulk' ? c.bulk.reactor : c.reactor);
  const bulk = checked.flatMap((c) => (c.kind === 'bulk' ? [c.bulk] : []));
  // Each registered before its record is written, as a single start is (decision 152).
  await Promise.all(bulk.map((b) => deps.eventCancels.register(b.reactor, b.executionId, b.input)));
  const started = startManyBackground(background, bulk);
  const debounced: Chain = { last: Promise.resolve() };
  const alones = checked.map((c) => (c.kind === 'alone' ? alone(deps, c, debounced) : undefined));
  const written = await started.catch(async (error: unknown) => {
    await Promise.allSettled(alones.filter((a) => a !== undefined)); // each settles on its own; the call rejects with the bulk's failure
    throw error;
  });
  let next = 0;
  return Promise.all(
    checked.map(async (c, i) => (c.kind === 'bulk' ? written[next++]! : c.kind === 'invalid' ? c.result : alones[i]!)),
  );
}

/** The debounced entries' starts, one after another in entry order (the last of a key is the one that runs). */
interface Chain {
  last: Promise<unknown>;
}

/**
 * Checks entry `i` without writing: its shape, reactor, options and tags, its input's shape and
 * contract, and its first record's size. An entry with an idempotency key, a debounce or an
 * ordered lock is started on its own, as by `start` (its claim, slot or position is a round trip
 * of its own); the others join the bulk start.
 */
async function check(
  deps: AcceptDeps & Pick<EngineParts, 'operations'>,
  store: Parameters<typeof checkFirstRecordSize>[0],
  raw: unknown,
  i: number,
  now: number,
): Promise<Checked> {
  const { reactor: given, input, options } = checkEntry(raw, i);
  const reactor = checkStartReactor(given, i);
  const startOptions = options as StartOptions;
  const plan: StartPlan = startPlan(startOptions, now, i);
  if (plan.debounce) needDebounceSlots(deps.operations);
  const executionId = deps.ids.executionId();
  const shape = inputShapeIssue(input);
  if (shape) return { kind: 'invalid', reactor, result: invalidInput(reactor, executionId, [shape]) };
  const validated = await validateContract(reactor.contract, input ?? {});
  if (!validated.ok) return { kind: 'invalid', reactor, result: invalidInput(reactor, executionId, validated.issues) };
  const idempotencyKey = startOptions.idempotencyKey;
  checkFirstRecordSize(store, { reactor, executionId, input: validated.value, plan, idempotencyKey, now }, i);
  if (
    idempotencyKey !== undefined ||
    plan.debounce !== undefined ||
    reactor.coordination.some((s) => s.kind === 'ordered_lock')
  )
    return { kind: 'alone', reactor, entry: { reactor, input: input as never, options: startOptions } };
  return { kind: 'bulk', bulk: { reactor, executionId, input: validated.value, plan } };
}

/** An entry started on its own, as by `start`; debounced ones after the debounced entries before them. */
function alone(
  deps: AcceptDeps & Pick<EngineParts, 'background' | 'clock' | 'operations'>,
  checked: Extract<Checked, { kind: 'alone' }>,
  debounced: Chain,
): Promise<RunResult> {
  const start = (): Promise<RunResult> =>
    startReactor(deps, checked.reactor, checked.entry.input, checked.entry.options);
  if (checked.entry.options?.debounce === undefined) return start();
  const result = debounced.last.then(start);
  debounced.last = result.catch(() => undefined);
  return result;
}
