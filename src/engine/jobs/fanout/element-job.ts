/**
 * A job of one element of a fan-out map: run the element's body once (its own record, its own
 * retries), compensate it when it fails, settle it in the ledger (once, whatever the number of
 * deliveries), dispatch the element its slot frees, and wake the parent when the map is done.
 * During the map's rollback the same record's job undoes the element, in turn, highest index
 * first (decisions 018, 019).
 *
 * @module
 */
import type { AnyReactorDefinition, MapNode } from '../../../dsl/definition.js';
import { errorToJSON, FanOutError, ReactorError } from '../../../errors.js';
import { abandonElement, neverCompleted } from '../../execution/fanout/element-abandon.js';
import { elementState, tagFailures, undoElementRecord } from '../../execution/fanout/element-undo.js';
import { executionJob, nextJob } from '../../execution/next-job.js';
import { runElement } from '../../graph/map-element.js';
import { elementIdOf, elementPathOf, elementRunJobId, elementUndoJobId, mapIdOf } from '../../model/fanout/ids.js';
import type { NodeOutcome } from '../../model/outcome.js';
import { delayOf, onSuspension, type Suspension } from '../../model/suspension.js';
import type { ElementSettlement, ElementView } from '../../../ports/fanout.js';
import type { JobDelivery } from '../../../ports/queue.js';
import { TERMINAL_STATUSES, type ElementLink, type ExecutionRecord } from '../../../ports/store.js';
import { errorSummary, type RunState } from '../../run/run-state.js';
import type { After, BackgroundDeps } from '../deps.js';
import { reparkBehindSameHolder, requeuedJobOf } from '../park.js';
import { parkElement, resumeParkedElement } from './element-park.js';

interface ElementJob {
  readonly deps: BackgroundDeps;
  readonly reactor: AnyReactorDefinition;
  readonly node: MapNode;
  readonly link: ElementLink;
  readonly mapId: string;
  readonly record: ExecutionRecord;
}

/** Processes a job whose record is an element of a fan-out map (called under the element's liveness lock). */
export async function processElementJob(
  deps: BackgroundDeps,
  reactor: AnyReactorDefinition,
  record: ExecutionRecord,
  delivery: JobDelivery,
  signal: AbortSignal,
): Promise<After> {
  const link = record.element!;
  const node = reactor.byName.get(link.step);
  if (node?.kind !== 'map' || !deps.fanOut) {
    throw new FanOutError(
      'fan_out_unknown',
      `element ${record.id}: reactor "${reactor.name}" has no fan-out map "${link.step}" here (or this engine has no fan-out ledger)`,
      { executionId: record.id, step: link.step },
    );
  }
  const job: ElementJob = { deps, reactor, node, link, mapId: mapIdOf(link.parentId, link.step), record };
  const view = await deps.fanOut.element(job.mapId, link.index);
  if (!view) return undefined; // the map's ledger expired: nothing to do
  if (view.phase === 'rollback') {
    // A pending or parked element the rolled-back map will never run (its fallback or wake job, or a late first job).
    if (view.status === 'pending' && neverCompleted(record))
      return void (await abandonElement(deps, elementState(job, false)));
    return undoElement(job, view);
  }
  if (TERMINAL_STATUSES.has(record.status)) return settle(job, elementState(job, false), settlementOf(record)); // a redelivery: settle again (counted once)
  const retryAt = record.background?.retryAt;
  if (retryAt !== undefined && retryAt - deps.clock.now() > 25) {
    // An early delivery must not skip the element's retry backoff.
    await deps.queue.enqueue(executionJob(record.id, reactor.name), {
      jobId: `${record.id}:due:${delivery.jobId}:${delivery.delivery}`,
      delayMs: retryAt - deps.clock.now(),
    });
    return undefined;
  }
  const state = elementState(job, false);
  // Its fallback job finds the key held by the holder it parked behind: it parks again, spending one attempt (decision 097).
  // The park's own job, also when it was enqueued again because the previous job still held the lease.
  const parkJob = requeuedJobOf(record.id, delivery);
  const reparked =
    record.status === 'parked' && !view.stopped && !signal.aborted
      ? await reparkBehindSameHolder(deps, state, parkJob)
      : undefined;
  if (reparked) return reparked;
  resumeParkedElement(state, parkJob); // a parked element's job: it no longer waits
  if (view.stopped && Object.keys(record.steps).length === 0) {
    // An atomic map stopped before this element started: it settles as not started.
    state.emit({ type: 'map.element_skipped', step: link.step, index: link.index, reason: 'not_started' });
    await state.checkpoint('cancelled', { cancelReason: 'not started: the atomic map stopped at a failed element' });
    return settle(job, state, 'not_started');
  }
  const input = record.input as { readonly item: unknown };
  const place = { path: elementPathOf(link.step, link.index), reactor: reactor.name, signal };
  // Step-level contention parks the element (R-8, decision 038) while under the cap.
  state.bindWork({ contentionCap: deps.options.contentionCap });
  const outcome = await runElement(state, node, place, input.item, link.index);
  return settleOutcome(job, state, outcome);
}

function settlementOf(record: ExecutionRecord): ElementSettlement {
  const path = elementPathOf(record.element!.step, record.element!.index);
  if (record.status === 'completed') return record.steps[path]?.status === 'skipped' ? 'skipped' : 'completed';
  if (record.status === 'failed') return 'failed';
  if (record.status === 'halted') return 'skipped';
  return 'not_started';
}

async function settleOutcome(job: ElementJob, state: RunState, outcome: NodeOutcome): Promise<After> {
  const { link } = job;
  const at = { step: link.step, index: link.index };
  switch (outcome.kind) {
    case 'yield': {
      const later = async (suspension: Suspension): Promise<After> =>
        void (await retryLater(job, state, outcome.step, delayOf(suspension)));
      // An element runs one step (or a reactor): it parks on contention; anything else runs again later.
      return onSuspension<Promise<After>>(outcome.suspension, {
        contention: (s) => parkElement(job.deps, state, link, s.error),
        awaitUnit: (s) => parkElement(job.deps, state, link, s.error),
        retry: later,
        sleep: later,
        pause: later,
        fanOut: later,
        // Only an execution's root frame pauses on a failure (an element's never does): an internal invariant broke.
        failurePause: () =>
          Promise.reject(new ReactorError('unexpected_yield', 'an element does not pause on a failure')),
      });
    }
    case 'success':
      state.emit({ type: 'map.element_completed', ...at });
      await state.checkpoint('completed', { value: outcome.value });
      return settle(job, state, 'completed');
    case 'skipped':
      state.emit({ type: 'map.element_skipped', ...at, reason: 'skipped' });
      await state.checkpoint('completed', { value: outcome.value });
      return settle(job, state, 'skipped');
    case 'halt':
      state.emit({ type: 'map.element_skipped', ...at, reason: 'halted' });
      await state.checkpoint('halted', { haltReason: outcome.reason });
      return settle(job, state, 'skipped');
    case 'failure': {
      // Compensated here, at once, in both modes; the parent reports its compensate failures.
      const before = state.rollbackFailures.length;
      await outcome.compensate?.();
      tagFailures(state, before, link);
      state.emit({ type: 'map.element_failed', ...at, error: errorSummary(outcome.error) });
      await state.checkpoint('failed', { error: errorToJSON(outcome.error), failedStep: outcome.step });
      return settle(job, state, 'failed');
    }
  }
}

/** The engine owns retries: the element's next attempt is a delayed job of its own record. */
async function retryLater(job: ElementJob, state: RunState, step: string, delayMs: number): Promise<void> {
  await nextJob(job.deps, state, {
    status: 'pending',
    reason: 'retry',
    delayMs,
    queued: false,
    traced: false,
    update: (background) => ({ ...background, retryAt: state.clock.now() + delayMs }),
    announce: ({ jobId }) =>
      state.emit({
        type: 'map.element_retrying',
        step: job.link.step,
        index: job.link.index,
        attempt: (state.stepRecord(step)?.attempts ?? 0) + 1,
        delayMs,
        jobId,
      }),
  });
}

/** Settles the element (once), dispatches the element it frees a slot for, wakes the parent when the map is done. */
async function settle(job: ElementJob, state: RunState, outcome: ElementSettlement): Promise<After> {
  const { deps, link } = job;
  const reply = await deps.fanOut!.settle(job.mapId, link.index, outcome);
  if (reply.rollback && outcome === 'completed') {
    // The run was cancelled while this element ran: nobody will undo it later, so it undoes itself.
    const fresh = await deps.store.get(job.record.id);
    if (fresh?.status === 'completed') await undoElementRecord({ ...job, record: fresh });
    await deps.fanOut!.undone(job.mapId, link.index);
  }
  return async () => {
    if (reply.claim >= 0) {
      const next = elementIdOf(link.parentId, link.step, reply.claim);
      state.emit({ type: 'map.element_dispatched', step: link.step, index: reply.claim, jobId: elementRunJobId(next) });
      await deps.queue.enqueue(executionJob(next, job.reactor.name), { jobId: elementRunJobId(next) });
    }
    if (reply.done && reply.wakeJob !== undefined) await deps.queue.promote(reply.wakeJob);
  };
}

/** Rollback phase: undo this element if it is the highest completed one left, then pass the turn on. */
async function undoElement(job: ElementJob, view: ElementView): Promise<After> {
  const { deps, link } = job;
  if (view.status !== 'undone') {
    if (view.target !== link.index) return undefined; // not its turn (the chain dispatches it when it is)
    await undoElementRecord(job);
  }
  const reply = await deps.fanOut!.undone(job.mapId, link.index);
  return async () => {
    if (reply.target >= 0) {
      const next = elementIdOf(link.parentId, link.step, reply.target);
      await deps.queue.enqueue(executionJob(next, job.reactor.name), { jobId: elementUndoJobId(next) });
    } else if (reply.wakeJob !== undefined) {
      await deps.queue.promote(reply.wakeJob);
    }
  };
}
