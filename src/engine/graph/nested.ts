/**
 * Nested work inside one execution: `compose` (a reactor run inline as one step) and in-process
 * `map` (a step definition or a reactor per element). A child reactor's graph runs through the
 * `runFrame` each entry point receives (the scheduler's), so this module does not import the
 * scheduler that calls it.
 *
 * @module
 */
import type { AnyReactorDefinition, ComposeNode, MapNode } from '../../dsl/definition.js';
import type { MapResult, MapFailure } from '../../dsl/map-result.js';
import { errorToJSON, MapTooLargeError, toError } from '../../errors.js';
import { childInput } from '../model/child-input.js';
import type { CompletedEntry, NodeOutcome } from '../model/outcome.js';
import { resolveArgs, resolveArg, type ArgScope } from '../model/resolve-args.js';
import type { RunState } from '../run/run-state.js';
import { COMPACT_MAP_ABOVE } from '../run/compact-map.js';
import type { GraphOutcome, RunFrame } from './frame.js';
import { undoAll } from './undo.js';
import { notStarted, refusalInWorker, runStepNode, type StepPlace } from '../run/step-runner.js';
import { runFanOut, runsFanOut } from './fanout/parent.js';

/** Runs a composed child reactor with `runFrame`; its failure has rolled the child back already. */
export async function runCompose(
  run: RunState,
  node: ComposeNode,
  place: StepPlace,
  scope: ArgScope,
  runFrame: RunFrame,
): Promise<NodeOutcome> {
  if (run.replayOnly && !run.reached(place.path)) return { kind: 'skipped', value: undefined };
  let input: Record<string, unknown>;
  try {
    input = await childInput(
      node.reactor,
      resolveArgs(node.args, scope, place.path, Object.keys(node.reactor.contract.fields)),
      place.path,
    );
  } catch (error) {
    return notStarted(run, place.path, toError(error));
  }
  run.emit({ type: 'step.started', step: place.path, attempt: 1, reactor: place.reactor });
  return settleChild(run, place, await runChild(run, node.reactor, input, place, runFrame));
}

/**
 * Runs a child reactor inside this execution, under its own reactor-level declarations (taken
 * with the root as owner, so keys the execution holds re-enter).
 */
async function runChild(
  run: RunState,
  child: AnyReactorDefinition,
  input: Record<string, unknown>,
  place: StepPlace,
  runFrame: RunFrame,
): Promise<GraphOutcome> {
  const abort = new AbortController();
  place.signal.addEventListener('abort', () => abort.abort(place.signal.reason), { once: true });
  // An ordered lock orders top-level runs: nested work cannot queue behind its own turn (docs/decisions/005).
  const specs = run.replayOnly ? [] : child.coordination.filter((s) => s.kind !== 'ordered_lock');
  const admission = specs.length === 0 ? undefined : await run.admit(specs, input, { reactor: child.name, abort });
  if (admission?.kind === 'refused') {
    // In a worker, a busy key of the child parks the whole execution, as a step's does (docs/decisions/097).
    const error = refusalInWorker(run, specs, admission.error, { args: input, reactor: child.name, step: undefined });
    if (error === undefined)
      return { status: 'yielded', step: place.path, suspension: { kind: 'contention', error: admission.error } };
    return { status: 'failed', step: place.path, error, validation: [] };
  }
  if (admission?.kind === 'halt')
    return { status: 'halted', step: place.path, reason: admission.reason, data: admission.data };
  let outcome: GraphOutcome | undefined;
  try {
    outcome = await runFrame(run, { def: child, input, prefix: `${place.path}.`, signal: abort.signal });
    return outcome;
  } finally {
    await admission?.holds.release(outcome?.status ?? 'failed').catch(() => undefined);
  }
}

function settleChild(run: RunState, place: StepPlace, outcome: GraphOutcome): NodeOutcome {
  if (outcome.status === 'completed') {
    run.setStep(place.path, { status: 'completed', attempts: 1, result: outcome.value });
    run.emit({ type: 'step.succeeded', step: place.path, attempt: 1, reactor: place.reactor });
    return {
      kind: 'success',
      value: outcome.value,
      entry: { step: place.path, undo: () => undoAll(outcome.completed, run) },
    };
  }
  if (outcome.status === 'yielded') return { kind: 'yield', step: outcome.step, suspension: outcome.suspension };
  if (outcome.status === 'halted') {
    run.setStep(place.path, { status: 'halted', attempts: 1 });
    run.emit({ type: 'step.halted', step: place.path, reason: outcome.reason, reactor: place.reactor });
    return {
      kind: 'halt',
      step: outcome.step,
      reason: outcome.reason,
      ...(outcome.data === undefined ? {} : { data: outcome.data }),
    };
  }
  run.setStep(place.path, { status: 'failed', attempts: 1, error: errorToJSON(outcome.error) });
  return {
    kind: 'failure',
    step: outcome.step ?? place.path,
    error: outcome.error,
    validation: outcome.validation,
    compensate: undefined,
  };
}

interface ElementOutcome {
  readonly index: number;
  readonly outcome: NodeOutcome;
}

/** Runs a map in this process with bounded concurrency (reactor elements with `runFrame`). */
export async function runMap(
  run: RunState,
  node: MapNode,
  place: StepPlace,
  scope: ArgScope,
  runFrame: RunFrame,
): Promise<NodeOutcome> {
  if (runsFanOut(run, node, place)) return runFanOut(run, node, place, scope);
  if (run.replayOnly && !run.reached(place.path)) return { kind: 'skipped', value: undefined };
  let items: unknown;
  try {
    items = resolveArg(node.source, scope, place.path, 'source');
    if (!Array.isArray(items))
      throw new TypeError(`map "${place.path}": the source is not an array (got ${typeof items})`);
    // Before any element runs (docs/limits.md).
    if (items.length > node.maxElements) throw new MapTooLargeError(place.path, items.length, node.maxElements);
  } catch (error) {
    return notStarted(run, place.path, toError(error));
  }
  // A large map of steps keeps its element states apart from the record (docs/decisions/076).
  if (node.element.kind === 'step' && items.length > COMPACT_MAP_ABOVE) run.compactMap(place.path, items.length);
  run.emit({ type: 'step.started', step: place.path, attempt: 1, reactor: place.reactor });
  const controller = new AbortController();
  place.signal.addEventListener('abort', () => controller.abort(place.signal.reason), { once: true });
  const settled = await runElements(
    run,
    node,
    { ...place, signal: controller.signal },
    items as readonly unknown[],
    controller,
    runFrame,
  );
  return settleMap(run, node, place, settled, items.length);
}

async function runElements(
  run: RunState,
  node: MapNode,
  place: StepPlace,
  items: readonly unknown[],
  controller: AbortController,
  runFrame: RunFrame,
): Promise<ElementOutcome[]> {
  const settled: ElementOutcome[] = [];
  let next = 0;
  let stop = false;
  const worker = async (): Promise<void> => {
    while (!stop && next < items.length) {
      const index = next++;
      const at = { ...place, path: `${place.path}[${index}]` };
      const outcome = await runMapElement(run, node, at, items[index], index, runFrame);
      settled.push({ index, outcome });
      if (outcome.kind === 'yield') stop = true;
      if (outcome.kind === 'failure' && node.atomic) {
        stop = true;
        controller.abort('element failed');
      }
      if (outcome.kind === 'failure' && !node.atomic) await outcome.compensate?.();
    }
  };
  // Every element in flight returns before the map does, also when one throws (a stopping worker job: no body outlives its job).
  const ended = await Promise.allSettled(Array.from({ length: Math.min(node.maxConcurrency, items.length) }, worker));
  const thrown = ended.find((e) => e.status === 'rejected');
  if (thrown) throw thrown.reason;
  return settled.sort((a, b) => a.index - b.index);
}

/** Runs one element of a map (a step definition, or a reactor with `runFrame`) at `place` (`items[3]`). */
export async function runMapElement(
  run: RunState,
  node: MapNode,
  place: StepPlace,
  item: unknown,
  index: number,
  runFrame: RunFrame,
): Promise<NodeOutcome> {
  let input: Record<string, unknown>;
  try {
    input = (node.elementArgs as (item: unknown, index: number) => Record<string, unknown>)(item, index);
  } catch (error) {
    return notStarted(run, place.path, toError(error));
  }
  if (node.element.kind === 'step') return runStepNode(run, node.element.node, place, () => input);
  try {
    input = await childInput(node.element.reactor, input, place.path);
  } catch (error) {
    return notStarted(run, place.path, toError(error));
  }
  return settleChild(run, place, await runChild(run, node.element.reactor, input, place, runFrame));
}

function settleMap(
  run: RunState,
  node: MapNode,
  place: StepPlace,
  settled: readonly ElementOutcome[],
  size: number,
): NodeOutcome {
  const values: unknown[] = new Array<unknown>(size).fill(undefined);
  const completed: (CompletedEntry & { index: number })[] = [];
  const failures: MapFailure[] = [];
  const seen = new Set<number>();
  const succeededAt = new Set<number>(); // completed or skipped: the element's value counts as a success
  let firstFailure: Extract<NodeOutcome, { kind: 'failure' }> | undefined;
  const yielded = settled.find((s) => s.outcome.kind === 'yield')?.outcome;
  if (yielded) return yielded;
  for (const { index, outcome } of settled) {
    seen.add(index);
    if (outcome.kind === 'success' || outcome.kind === 'skipped') {
      values[index] = outcome.value;
      succeededAt.add(index);
    }
    if (outcome.kind === 'success') completed.push({ ...outcome.entry, index });
    if (outcome.kind === 'failure') {
      failures.push({ index, error: errorToJSON(outcome.error) });
      firstFailure ??= outcome;
    }
  }
  const undoElements = (): Promise<void> => undoAll([...completed].sort((a, b) => a.index - b.index));
  if (firstFailure && node.atomic) {
    const failed = settled
      .filter((s) => s.outcome.kind === 'failure')
      .map((s) => s.outcome as Extract<NodeOutcome, { kind: 'failure' }>);
    run.setStep(place.path, { status: 'failed', attempts: 1, error: errorToJSON(firstFailure.error) });
    const compensate = async (): Promise<void> => {
      for (const f of failed) await f.compensate?.();
      await undoElements();
    };
    return {
      kind: 'failure',
      step: firstFailure.step,
      error: firstFailure.error,
      validation: firstFailure.validation,
      compensate,
    };
  }
  const notStartedIndexes = Array.from({ length: size }, (_, i) => i).filter((i) => !seen.has(i));
  // One pass in index order, a set lookup per element (a scan per element made large maps quadratic).
  const succeeded = values.flatMap((value, index) => (succeededAt.has(index) ? [{ index, value }] : []));
  const result: MapResult<unknown> = {
    values,
    successes: succeeded.map((s) => s.value),
    succeeded,
    failures,
    notStarted: notStartedIndexes,
  };
  run.setStep(place.path, { status: 'completed', attempts: 1, result });
  run.emit({ type: 'step.succeeded', step: place.path, attempt: 1, reactor: place.reactor });
  return { kind: 'success', value: result, entry: { step: place.path, undo: undoElements } };
}
