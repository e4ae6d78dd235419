/**
 * `engine.startMany`: many background starts in one call. Every entry's start options are
 * checked first (a bad one throws, nothing written), then every input validated (an invalid one
 * fails only its own entry); the valid entries are written and their first jobs enqueued in one
 * bulk call (docs/decisions/079).
 *
 * @module
 */
import { validateContract } from '../../dsl/contract.js';
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import { invalidInput } from '../execution/execute.js';
import { startManyBackground, type BulkStart } from '../jobs/start-many.js';
import type { StartPlan } from '../model/background.js';
import type { RunResult } from '../model/results.js';
import type { AcceptDeps } from './accept.js';
import { needQueue, type EngineParts } from './parts.js';
import { startReactor } from './start.js';
import { startPlan } from './start-options.js';
import type { StartEntry } from './types.js';

/** What one entry came to before the bulk write: a result already (invalid, started alone) or a bulk start. */
type Sorted = { readonly result: Promise<RunResult> } | { readonly bulk: BulkStart };

/** Starts every entry (see `Engine.startMany`); resolves with one result per entry, in order. */
export async function startManyReactors(
  deps: AcceptDeps & Pick<EngineParts, 'background' | 'clock' | 'operations'>,
  entries: readonly StartEntry[],
): Promise<RunResult[]> {
  if (!Array.isArray(entries)) throw new TypeError('startMany takes an array of { reactor, input, options? }');
  const background = needQueue(deps);
  const now = deps.clock.now();
  const plans = entries.map((entry, i) => startPlan(entry.options ?? {}, now, i));
  const debounced: Chain = { last: Promise.resolve() };
  const sorted = await Promise.all(entries.map((entry, i) => sort(deps, entry, plans[i]!, debounced)));
  const bulk = sorted.flatMap((s) => ('bulk' in s ? [s.bulk] : []));
  const started = await startManyBackground(background, bulk);
  let next = 0;
  return Promise.all(sorted.map(async (s) => ('bulk' in s ? started[next++]! : s.result)));
}

/** The debounced entries' starts, one after another in entry order (the last of a key is the one that runs). */
interface Chain {
  last: Promise<unknown>;
}

/**
 * Registers the entry's reactor and validates its input. An entry with an idempotency key, a
 * debounce or an ordered lock is started on its own, as by `start` (its claim, slot or position is
 * a round trip of its own; debounced entries one after another, in `debounced`); an invalid input
 * is its `failed` result.
 */
async function sort(
  deps: AcceptDeps & Pick<EngineParts, 'background' | 'clock' | 'operations'>,
  entry: StartEntry,
  plan: StartPlan,
  debounced: Chain,
): Promise<Sorted> {
  const reactor: AnyReactorDefinition = entry.reactor;
  const start = (): Promise<RunResult> => startReactor(deps, reactor, entry.input, entry.options);
  if (entry.options?.debounce !== undefined) {
    const result = debounced.last.then(start);
    debounced.last = result.catch(() => undefined);
    return { result };
  }
  if (entry.options?.idempotencyKey !== undefined || reactor.coordination.some((s) => s.kind === 'ordered_lock'))
    return { result: start() };
  deps.registry.register(reactor);
  const executionId = deps.ids.executionId();
  const validated = await validateContract(reactor.contract, entry.input ?? {});
  if (!validated.ok) return { result: Promise.resolve(invalidInput(reactor, executionId, validated.issues)) };
  return { bulk: { reactor, executionId, input: validated.value, plan } };
}
