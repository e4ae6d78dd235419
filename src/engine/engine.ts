/**
 * The engine's composition root: `createEngine` builds the engine's parts over the ports it is
 * given (the embedded memory backend by default) and wires them together. What each part does
 * lives in its layer; the public methods are in `api/`.
 *
 * @module
 */
import { fastPathsOf } from '../coordination/fast-paths.js';
import * as build from './api/deps.js';
import { IdempotencyClaims } from './api/idempotency.js';
import { resumeExecution } from './api/interrupt/resume.js';
import type { EngineParts } from './api/parts.js';
import type { ReactorRegistry } from './api/registry.js';
import { listExecutions } from './api/list.js';
import { currentResult, isReactor, waitFor, withHandle } from './api/results.js';
import { retryExecution } from './api/retry.js';
import { forkExecution } from './api/fork.js';
import { retryStep, rollbackPaused, skipStep } from './api/steer.js';
import { wakeExecution } from './api/wake.js';
import { withExecutionId } from './api/execution-id.js';
import { runReactor } from './api/run.js';
import { watchExecution } from './api/watch.js';
import { processOne, startReactor } from './api/start.js';
import { startManyReactors } from './api/start-many.js';
import { startSweeps, sweepNow } from './api/sweeps.js';
import { listEvents, sendEvent, sendManyEvents, type EventDeps } from './api/events.js';
import { EventCancels, registeringChildren } from './api/event-cancels.js';
import { EventNotices } from './model/event-notices.js';
import { dropEventWaits, recheckParked } from './execution/event-wait/deliver.js';
import { discardTimeoutJobs } from './execution/interrupt/pause.js';
import { resumeWaitsFor } from './execution/event-wait/match.js';
import type { AnyEventDeclaration } from '../dsl/event.js';
import type { Engine, EngineOptions, SendEntry, SendOptions, StartEntry } from './api/types.js';
import { CoordinationAdmitter } from './execution/admitter.js';
import { CancelTargets } from './execution/cancels.js';
import { cancelExecution, undoExecution, type OperationsDeps } from './execution/operations.js';
import { StateFactory } from './execution/state-factory.js';
import { asyncBackground } from './jobs/async-port.js';
import { cancelChild } from './jobs/async/cancel-child.js';
import type { BackgroundDeps } from './jobs/deps.js';
import { Wakeups } from './jobs/wakeups.js';
import { DEGRADED_PARK_FALLBACK_MS } from './jobs/park.js';
import type { Clock } from '../ports/clock.js';
import { UnitSignals, type AsyncPort } from './run/async/port.js';
import { invokeStep } from './run/invoke.js';

export type {
  DebounceOptions,
  Engine,
  EngineOptions,
  EventListPage,
  EventListQuery,
  ListPage,
  ListedExecution,
  SendEntry,
  SendOptions,
  SendResult,
  ListQuery,
  RunOptions,
  StartEntry,
  StartManyResults,
  ExecutionHandle,
  ResultOf,
  Started,
  StartOptions,
  WaitOptions,
} from './api/types.js';
export type { WatchItem, WatchOptions } from './api/watch.js';

/** Creates an engine. */
export function createEngine(options: EngineOptions): Engine {
  const core = build.engineCore(options);
  const { store, hub, logger, registry, detached } = core;
  // Cancels announced by other processes reach this engine's inline runs and worker jobs (decision 053).
  const cancels = new CancelTargets(options.coordinator, build.inlineTargets(core.inflight));
  const signals = new UnitSignals();
  const wakeups = new Wakeups({ queue: options.queue, waitList: options.waitList, signals, detached, logger });
  const coordination = build.coordinationDeps(options, wakeups.released);
  // A key the coordinator freed on its own (a cross-process grant nobody here could take, decision 059) wakes like a release.
  const fast = fastPathsOf(options.coordinator);
  fast.onFreed(wakeups.released);
  // Release notifications that may pass this process by are a fault to see: warn, and say when they are back (decision 112).
  fast.onWakeUpsDegraded((degraded, detail) => {
    if (degraded)
      logger.warn(
        { detail, fallbackMs: DEGRADED_PARK_FALLBACK_MS },
        'wake-ups degraded: releases may not reach this process; parked executions poll sooner until the subscriptions are confirmed again',
      );
    else logger.info({}, 'wake-ups recovered: the subscriptions are confirmed again');
  });
  const jobLeases = build.jobLeasesOf(options);
  const workerId = build.engineIdOf(options, core.ids);
  const admitter = new CoordinationAdmitter(coordination);
  const notices = new EventNotices();
  // Executions of reactors with `cancelOn` register when accepted and unregister with their terminal record (decision 151).
  const eventCancels = new EventCancels({
    waits: options.eventWaits,
    registry,
    store,
    operations: () => operations,
    notices,
    clock: core.clock,
    logger,
    detached,
  });
  // Set once the deliveries' deps exist: a park with event waits open starts their re-check (decision 149).
  let parkedOnEvents: (executionId: string) => void = () => undefined;
  const states = new StateFactory({
    base: build.stateBase(options, core, workerId, (id) => parkedOnEvents(id)),
    admitter,
    settleListener: {
      executionSettled: (record) => {
        wakeups.executionSettled(record);
        // A run that ends while it waits leaves no event registration (decision 148) and no timeout job (decision 160) behind.
        const open = (record.interrupts ?? []).filter((w) => w.resumedAt === undefined);
        if (open.some((w) => w.event !== undefined))
          detached.detach(dropEventWaits(options.eventWaits, record), (error) =>
            logger.warn({ executionId: record.id, error: String(error) }, 'an ended wait stayed registered'),
          );
        if (open.some((w) => w.timeoutAt !== undefined))
          detached.detach(discardTimeoutJobs(options.queue, record.id, open), () => undefined);
        eventCancels.settled(record);
      },
    },
  });
  const background = build.backgroundDeps(options, core, { coordination, cancels, workerId, jobLeases, states });
  // Operations are built from the states: a child's cancel reaches them once they exist (called only while running).
  states.useAsync(asyncPort(options, core.clock, background, signals, registry, eventCancels, () => operations));
  const sweeper = build.sweeperOf(options, core, { background, workerId, jobLeases });
  const inlineLeases = build.inlineLeasesOf(options, core, { workerId, jobLeases });
  const claims = new IdempotencyClaims({ store, clock: core.clock, live: core.inflight });
  const operations = build.operationsDeps(options, core, { coordination, states });
  const resume = build.resumeDeps(options, core, operations);
  const steer = { ...resume, ...(inlineLeases === undefined ? {} : { inlineLeases }) };
  const invoke = build.invokeDeps(coordination, core);
  const fork = { ...resume, ids: core.ids, logger: core.logger, maxTraceEntries: core.maxTraceEntries, eventCancels };
  const deliveries = { ...build.deliverDeps(options, core, resume), notices };
  parkedOnEvents = (id) =>
    detached.detach(recheckParked(deliveries, id), (error) =>
      logger.warn({ executionId: id, error: String(error) }, 'the re-check of a parked event wait failed'),
    );
  const parts: EngineParts = {
    ...core,
    claims,
    states,
    background,
    cancels,
    inlineLeases,
    operations,
    sweeper,
    eventCancels,
  };
  const events: EventDeps = {
    events: options.events,
    notices,
    clock: core.clock,
    newId: () => `ev-${core.ids.executionId()}`,
    triggers: {
      triggersOf: (name) => registry.triggersOf(name),
      start: (reactor, input, o) => startReactor(parts, reactor, input, o),
      notices,
      clock: core.clock,
      logger,
    },
    cancels: eventCancels,
    resumeWaits: (event) => resumeWaitsFor(deliveries, event),
  };
  return {
    resume: (target, payload, o = {}) => resumeExecution(resume, target, payload, o),
    run: ((reactor, input, o) => runReactor(parts, reactor, input, o)) as Engine['run'],
    cancel: (id, o = {}) =>
      withExecutionId('cancel', id, (i) => cancelExecution(operations, i, o.reason ?? 'cancelled by an operator')),
    undo: (id, o = {}) =>
      withExecutionId('undo', id, (i) => undoExecution(operations, i, o.reason ?? 'undone by an operator')),
    retry: (id) => withExecutionId('retry', id, (i) => retryExecution(parts, i)),
    retryStep: (id, o = {}) => withExecutionId('retryStep', id, (i) => retryStep(steer, i, o)),
    skipStep: (id, o) => withExecutionId('skipStep', id, (i) => skipStep(steer, i, o)),
    rollback: (id) => withExecutionId('rollback', id, (i) => rollbackPaused(resume, i)),
    fork: (id, o) => withExecutionId('fork', id, (i) => forkExecution(fork, i, o)),
    wake: (id) => withExecutionId('wake', id, (i) => wakeExecution(parts, i)),
    start: async (reactor, input, o) => withHandle(parts, reactor, await startReactor(parts, reactor, input, o)),
    startMany: (async (entries: readonly StartEntry[]) =>
      (await startManyReactors(parts, entries)).map((started, i) =>
        withHandle(parts, entries[i]!.reactor, started),
      )) as Engine['startMany'],
    process: (job, delivery) => processOne(parts, job, delivery),
    result: (id: unknown, reactor?: unknown) =>
      reactor === undefined || isReactor(reactor)
        ? withExecutionId('result', id, (i) => currentResult(parts, i, reactor))
        : Promise.reject(new TypeError('engine.result: the second argument must be a reactor')),
    list: (query) => listExecutions(parts, query),
    wait: ((id, second, third) =>
      withExecutionId('wait', id, (i) =>
        isReactor(second) ? waitFor(parts, i, third, second) : waitFor(parts, i, second),
      )) as Engine['wait'],
    send: ((event: AnyEventDeclaration | string, payload: unknown, o?: SendOptions) =>
      sendEvent(events, event, payload, o)) as Engine['send'],
    sendMany: (entries: readonly SendEntry[]) => sendManyEvents(events, entries),
    listEvents: (query) => listEvents(events, query),
    subscribeEvents: (listener) => notices.subscribe(listener),
    register: (...reactors) => registry.register(...reactors),
    subscribe: (listener) => hub.subscribe(listener),
    watch: (id, o) => watchExecution(core, id, o),
    idle: async () => {
      await detached.idle();
      await core.publisher?.flushed();
    },
    sweep: () => sweepNow(parts),
    startSweeps: () => startSweeps(parts),
    store,
    invokeStep: (step, args, o = {}) => invokeStep(invoke, step, args, o.ctx),
  };
}

/** What the engine's run states get to dispatch async units and read their results (see `run/async/port.ts`). */
function asyncPort(
  options: EngineOptions,
  clock: Clock,
  background: BackgroundDeps | undefined,
  signals: UnitSignals,
  registry: ReactorRegistry,
  eventCancels: EventCancels,
  operations: () => OperationsDeps,
): AsyncPort {
  const waitMs = options.background?.asyncWaitMs ?? 30_000;
  return {
    // An `asyncReactor` child is registered for its `cancelOn` declarations like a start (decision 152).
    background: background ? registeringChildren(asyncBackground(background), eventCancels) : undefined,
    signals,
    waitMs,
    parkTimeoutMs: options.background?.asyncParkTimeoutMs ?? 3_600_000,
    workerWaitMs: options.background?.workerWaitMs ?? 250,
    settled: options.backgroundSettled,
    register: (reactor) => registry.register(reactor),
    cancelChild: (childId, reason) =>
      cancelChild(
        { operations: operations(), signals, clock, waitMs, settled: options.backgroundSettled },
        childId,
        reason,
      ),
  };
}

export { fromRecord } from './execution/execute.js';
