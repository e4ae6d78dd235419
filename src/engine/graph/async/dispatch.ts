/**
 * The dispatching side of `asyncStep` and `asyncReactor`: guard, persist, enqueue — once per
 * execution and step, however often the dispatcher's job is redelivered — then read the result
 * only if something reads it.
 *
 * @module
 */
import type { AnyReactorDefinition, AsyncReactorNode, AsyncStepNode } from '../../../dsl/definition.js';
import { validateContract } from '../../../dsl/contract.js';
import { ReactorError, toError } from '../../../errors.js';
import { childInput } from '../../model/child-input.js';
import type { NodeOutcome } from '../../model/outcome.js';
import { JOB_FORMAT_VERSION } from '../../../ports/queue.js';
import { RECORD_VERSION, type ExecutionRecord } from '../../../ports/store.js';
import { resolveArgs, type ArgScope } from '../../model/resolve-args.js';
import type { RunState } from '../../run/run-state.js';
import { notStarted, type StepPlace } from '../../run/step-runner.js';
import { childDeclarations } from '../../model/async/child-declarations.js';
import { refuseHandOff } from './guard.js';
import { readUnit } from './read-unit.js';

/** The id of the unit (or child execution) a step of an execution dispatches: one per step, so a redelivered dispatcher never dispatches twice. */
export const unitIdOf = (executionId: string, path: string): string => `${executionId}~${path}`;

/** True when a node of `def` reads `name`'s result (an argument, `waitFor`, or `returns`). */
export function hasReaders(def: AnyReactorDefinition, name: string): boolean {
  return def.returns === name || def.nodes.some((n) => n.dependsOn.includes(name));
}

/** Runs an `asyncStep` node: dispatches its unit, then reads the result if something waits for it. */
export async function runAsyncStep(
  run: RunState,
  node: AsyncStepNode,
  place: StepPlace,
  scope: ArgScope,
  def: AnyReactorDefinition,
): Promise<NodeOutcome> {
  const dispatched = await dispatchOnce(run, place, 'step', async () => {
    const args = await argsForGuard(node, scope, place.path);
    const declared =
      args === undefined
        ? []
        : [{ specs: node.coordination, args, keyScope: { reactor: place.reactor, step: place.path } }];
    const refusal = await refuseHandOff(run, { step: place.path, reactor: place.reactor, kind: 'step', declared });
    if (refusal) throw refusal;
    return async (unitId, dispatchedAt) => {
      const results = Object.fromEntries(node.dependsOn.map((d) => [d, scope.results.get(d)]));
      const unit = {
        kind: 'step' as const,
        step: place.path,
        reactor: place.reactor,
        dispatcherId: run.executionId,
        dispatchedAt,
        scope: { input: scope.input, results },
      };
      await saveUnitRecord(run, { id: unitId, unit, at: dispatchedAt });
      await run.async!.background!.queue.enqueue(
        { v: JOB_FORMAT_VERSION, executionId: unitId, reactor: run.reactor },
        { jobId: `${unitId}:1` },
      );
    };
  });
  return settle(run, place, def, node.name, dispatched);
}

/** Runs an `asyncReactor` node: validates the child's input here, dispatches the child execution, reads its outcome if something waits for it. */
export async function runAsyncReactor(
  run: RunState,
  node: AsyncReactorNode,
  place: StepPlace,
  scope: ArgScope,
  def: AnyReactorDefinition,
): Promise<NodeOutcome> {
  const dispatched = await dispatchOnce(run, place, 'reactor', async () => {
    const input = await childInput(
      node.reactor,
      resolveArgs(node.args, scope, place.path, Object.keys(node.reactor.contract.fields)),
      place.path,
    );
    // The child's reactor-level declarations and those of its steps keyed from its input alone (decision 033).
    const refusal = await refuseHandOff(run, {
      step: place.path,
      reactor: place.reactor,
      kind: 'reactor',
      declared: await childDeclarations(node.reactor, input),
    });
    if (refusal) throw refusal;
    return async (childId) => {
      run.async!.register(node.reactor);
      await run.async!.background!.startChild(node.reactor, {
        childId,
        input,
        parentId: run.executionId,
        traceContext: run.traceContext,
      });
    };
  });
  return settle(run, place, def, node.name, dispatched);
}

type Dispatched =
  | { readonly unitId: string; readonly dispatchedAt: number }
  | { readonly failed: NodeOutcome }
  | { readonly done: NodeOutcome };
/** Checks and prepares a dispatch (throwing refuses it); returns what persists and enqueues it. */
type Prepare = () => Promise<(unitId: string, dispatchedAt: number) => Promise<void>>;

async function dispatchOnce(
  run: RunState,
  place: StepPlace,
  kind: 'step' | 'reactor',
  prepare: Prepare,
): Promise<Dispatched> {
  const recorded = run.stepRecord(place.path);
  if (run.replayOnly)
    return { done: { kind: 'skipped', value: recorded?.status === 'completed' ? recorded.result : undefined } };
  if (recorded?.status === 'completed')
    return {
      done: { kind: 'success', value: recorded.result, entry: { step: place.path, undo: async () => undefined } },
    };
  if (recorded?.unitId !== undefined && recorded.dispatchedAt !== undefined)
    return { unitId: recorded.unitId, dispatchedAt: recorded.dispatchedAt };
  if (!run.async?.background) {
    return {
      failed: notStarted(
        run,
        place.path,
        new ReactorError(
          'queue_missing',
          `step "${place.path}" is async: dispatching it needs a queue (createEngine({ queue }) or createEmbeddedEngine())`,
        ),
      ),
    };
  }
  const unitId = unitIdOf(run.executionId, place.path);
  const dispatchedAt = run.clock.now();
  try {
    const commit = await prepare();
    await commit(unitId, dispatchedAt);
  } catch (error) {
    return { failed: notStarted(run, place.path, toError(error)) };
  }
  run.setStep(place.path, { status: 'dispatched', attempts: 0, unitId, dispatchedAt });
  run.emit({ type: 'async.dispatched', step: place.path, reactor: place.reactor, unitId, kind, jobId: `${unitId}:1` });
  return { unitId, dispatchedAt };
}

function settle(
  run: RunState,
  place: StepPlace,
  def: AnyReactorDefinition,
  name: string,
  dispatched: Dispatched,
): Promise<NodeOutcome> | NodeOutcome {
  if ('failed' in dispatched) return dispatched.failed;
  if ('done' in dispatched) return dispatched.done;
  // Nothing reads it: the run goes on without waiting (its value in the run's result map is undefined).
  if (!hasReaders(def, name)) return { kind: 'skipped', value: undefined };
  return readUnit(run, place, dispatched);
}

/** The unit record, written before its job is enqueued (a record that exists already is kept: a redelivered dispatch). */
async function saveUnitRecord(
  run: RunState,
  unit: { readonly id: string; readonly unit: NonNullable<ExecutionRecord['unit']>; readonly at: number },
): Promise<void> {
  const store = run.async!.background!.store;
  if (await store.get(unit.id)) return;
  await store.save({
    v: RECORD_VERSION,
    id: unit.id,
    rootId: run.rootExecutionId,
    parentId: run.executionId,
    reactor: run.reactor,
    status: 'pending',
    input: {},
    steps: {},
    rollbackFailures: [],
    background: { jobs: 1, contention: 0 },
    unit: unit.unit,
    // The unit's jobs join its dispatcher's trace (docs/decisions/028).
    ...(run.traceContext === undefined ? {} : { traceContext: run.traceContext }),
    createdAt: unit.at,
    updatedAt: unit.at,
  });
}

/** The unit's arguments as its worker will see them, for the guard only; undefined when they do not resolve (the worker reports that). */
async function argsForGuard(
  node: AsyncStepNode,
  scope: ArgScope,
  path: string,
): Promise<Record<string, unknown> | undefined> {
  if (!node.coordination.some((s) => s.kind === 'lock' || s.kind === 'semaphore')) return undefined;
  try {
    const raw = resolveArgs(node.args, scope, path, node.contract ? Object.keys(node.contract.fields) : undefined);
    if (!node.contract) return raw;
    const validated = await validateContract(node.contract, raw);
    return validated.ok ? validated.value : undefined;
  } catch {
    return undefined;
  }
}
