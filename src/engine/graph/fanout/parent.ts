/**
 * The parent side of a fan-out map, in a worker: create the element records and the ledger,
 * park while the elements run as jobs, collect their outcomes into a `MapResult`, and start the
 * distributed rollback of completed elements when the run fails (docs/decisions/018, 019).
 *
 * @module
 */
import type { MapNode } from '../../../dsl/definition.js';
import type { MapFailure, MapResult } from '../../../dsl/map-result.js';
import { errorFromJSON, FanOutError, MapTooLargeError, toError } from '../../../errors.js';
import type { NodeOutcome } from '../../model/outcome.js';
import type { LedgerSnapshot } from '../../../ports/fanout.js';
import { RECORD_VERSION, type ExecutionRecord } from '../../../ports/store.js';
import { resolveArg, type ArgScope } from '../../model/resolve-args.js';
import { COMPACT_MAP_ABOVE } from '../../run/compact-map.js';
import type { RunState } from '../../run/run-state.js';
import { notStarted, type StepPlace } from '../../run/step-runner.js';
import { elementIdOf, elementPathOf, elementRunJobId, mapIdOf } from '../../model/fanout/ids.js';
import { FanOutRollbackWait, type FanOutRuntime } from '../../model/fanout/wait.js';
import { inChunks } from '../../model/fanout/chunks.js';

/** True when this map runs as a fan-out here: a top-level map with `fanOut`, in a worker. */
export function runsFanOut(run: RunState, node: MapNode, place: StepPlace): boolean {
  return (
    node.fanOut !== undefined &&
    run.mode === 'worker' &&
    !place.path.includes('.') &&
    !place.path.includes('[') &&
    run.element === undefined
  );
}

/** Runs (or, on a later job, collects) a fan-out map of the parent execution `run`. */
export async function runFanOut(run: RunState, node: MapNode, place: StepPlace, scope: ArgScope): Promise<NodeOutcome> {
  const fan = run.fanOut;
  const mapId = mapIdOf(run.executionId, place.path);
  const recorded = run.stepRecord(place.path);
  if (recorded?.status === 'completed' && fan)
    return {
      kind: 'success',
      value: recorded.result,
      entry: { step: place.path, undo: () => rollbackElements(run, fan, mapId, place.path) },
    };
  if (run.replayOnly) {
    // An operator cancels the run while the elements run: undo what completed; the rest undo themselves as they finish.
    if (recorded?.status === 'running' && fan?.undoInline)
      run.addRollbackFailures(...(await fan.undoInline(mapId, place.path)));
    return { kind: 'skipped', value: undefined };
  }
  if (!fan)
    return notStarted(
      run,
      place.path,
      new FanOutError(
        'fan_out_unavailable',
        `map "${place.path}" fans out, but this engine has no fan-out ledger: pass createEngine({ fanOut }) (createEmbeddedEngine and createRedisRuntime do)`,
        { step: place.path },
      ),
    );
  let items: readonly unknown[];
  try {
    const source = resolveArg(node.source, scope, place.path, 'source');
    if (!Array.isArray(source))
      throw new TypeError(`map "${place.path}": the source is not an array (got ${typeof source})`);
    items = source;
  } catch (error) {
    return notStarted(run, place.path, toError(error));
  }
  let snapshot = await fan.ledger.snapshot(mapId);
  let dispatch: number[];
  if (snapshot) {
    // A later job (woken, or the fallback): dispatch again what is dispatched and unsettled (deduplicated by job id).
    dispatch = snapshot.statuses.flatMap((s, i) => (s === 'pending' && i < snapshot!.next ? [i] : []));
  } else {
    // Before any element record is written or dispatched (docs/limits.md).
    if (items.length > node.maxElements)
      return notStarted(run, place.path, new MapTooLargeError(place.path, items.length, node.maxElements));
    run.emit({ type: 'step.started', step: place.path, attempt: 1, reactor: place.reactor });
    await createElementRecords(run, fan, place.path, items);
    const opened = await fan.ledger.open(mapId, {
      total: items.length,
      batchSize: node.fanOut!.batchSize,
      atomic: node.atomic,
    });
    dispatch = Array.from({ length: opened.next }, (_, i) => i);
    for (const index of dispatch)
      run.emit({
        type: 'map.element_dispatched',
        step: place.path,
        index,
        jobId: elementRunJobId(elementIdOf(run.executionId, place.path, index)),
        reactor: place.reactor,
      });
    snapshot = (await fan.ledger.snapshot(mapId))!;
  }
  run.setStep(place.path, { status: 'running', attempts: 1 });
  if (snapshot.done) return collect(run, fan, node, place, mapId, snapshot);
  return {
    kind: 'yield',
    step: place.path,
    suspension: {
      kind: 'fanOut',
      park: {
        mapId,
        step: place.path,
        phase: 'collect',
        dispatch,
        target: -1,
        settled: snapshot.settled,
        total: snapshot.total,
      },
    },
  };
}

/** Writes one pending record per element, a chunk at a time: its input is the item and its index. */
async function createElementRecords(
  run: RunState,
  fan: FanOutRuntime,
  step: string,
  items: readonly unknown[],
): Promise<void> {
  const now = run.clock.now();
  await inChunks(items.length, (index) => {
    const item = items[index];
    const record: ExecutionRecord = {
      v: RECORD_VERSION,
      id: elementIdOf(run.executionId, step, index),
      rootId: run.rootExecutionId,
      parentId: run.executionId,
      reactor: run.reactor,
      // An element runs on its map's definition, and only there (docs/decisions/082): a worker without it leaves the element's job.
      ...run.definitionStamp,
      status: 'pending',
      input: { item, index },
      steps: {},
      rollbackFailures: [],
      background: { jobs: 1, contention: 0 },
      element: { parentId: run.executionId, step, index },
      // Element jobs join their map's trace (docs/decisions/028).
      ...(run.traceContext === undefined ? {} : { traceContext: run.traceContext }),
      createdAt: now,
      updatedAt: now,
    };
    return fan.store.save(record);
  });
}

/** Every element settled: read their records, a chunk at a time, into a `MapResult` (atomic with a failure: the map fails). */
async function collect(
  run: RunState,
  fan: FanOutRuntime,
  node: MapNode,
  place: StepPlace,
  mapId: string,
  snapshot: LedgerSnapshot,
): Promise<NodeOutcome> {
  const values: unknown[] = new Array<unknown>(snapshot.total).fill(undefined);
  const succeeded: { index: number; value: unknown }[] = [];
  const failures: MapFailure[] = [];
  const unstarted: number[] = [];
  // A large map's collected values are kept once, in its element states apart from the record (docs/decisions/076).
  const compact = snapshot.total > COMPACT_MAP_ABOVE;
  if (compact) run.compactMap(place.path, snapshot.total);
  const take = (index: number, record: ExecutionRecord | undefined): void => {
    const status = snapshot.statuses[index];
    if (compact && (status === 'completed' || status === 'skipped'))
      run.setStep(elementPathOf(place.path, index), { status, attempts: 1, result: record?.value });
    if (status === 'completed' || status === 'skipped')
      succeeded.push({ index, value: (values[index] = record?.value) });
    else if (status === 'failed')
      failures.push({
        index,
        error: record?.error ?? { name: 'Error', message: `element ${index} failed (its record expired)` },
      });
    else unstarted.push(index);
    // A failed element was compensated in its own job; its compensate failures belong to this run.
    for (const failure of record?.rollbackFailures ?? [])
      if (failure.kind === 'compensate') run.addRollbackFailures(failure);
  };
  // A chunk of records at a time, each dropped once read: linear, and never every record at once.
  await inChunks(
    snapshot.total,
    (i) => fan.store.get(elementIdOf(run.executionId, place.path, i)),
    (records, from) => records.forEach((record, i) => take(from + i, record)),
  );
  const count = (s: string): number => snapshot.statuses.filter((x) => x === s).length;
  run.emit({
    type: 'map.collected',
    step: place.path,
    completed: count('completed'),
    failed: failures.length,
    skipped: count('skipped'),
    notStarted: unstarted.length,
    reactor: place.reactor,
  });
  const first = failures[0];
  if (first && node.atomic) {
    const error = errorFromJSON(first.error);
    run.setStep(place.path, { status: 'failed', attempts: 1, error: first.error });
    const step = elementPathOf(place.path, first.index);
    return {
      kind: 'failure',
      step,
      error,
      validation: [],
      compensate: () => rollbackElements(run, fan, mapId, place.path),
    };
  }
  const result: MapResult<unknown> = {
    values,
    successes: succeeded.map((s) => s.value),
    succeeded,
    failures,
    notStarted: unstarted,
  };
  run.setStep(place.path, { status: 'completed', attempts: 1, result });
  run.emit({ type: 'step.succeeded', step: place.path, attempt: 1, reactor: place.reactor });
  return {
    kind: 'success',
    value: result,
    entry: { step: place.path, undo: () => rollbackElements(run, fan, mapId, place.path) },
  };
}

/**
 * Undo (or, for a failed atomic map, compensate) of a fan-out map: when completed elements are
 * left to undo, parks the execution (they are undone by jobs, highest index first); once they
 * are, it is done.
 */
async function rollbackElements(run: RunState, fan: FanOutRuntime, mapId: string, step: string): Promise<void> {
  if (fan.undoInline) return run.addRollbackFailures(...(await fan.undoInline(mapId, step)));
  const snapshot = await fan.ledger.snapshot(mapId);
  if (!snapshot || snapshot.target < 0) return; // nothing completed, every element undone already, or the ledger expired
  const seq = run.stepRecord(step)?.status === 'completed' ? run.stepRecord(step)?.completedSeq : undefined;
  throw new FanOutRollbackWait({ mapId, step, target: snapshot.target, total: snapshot.total, seq });
}
