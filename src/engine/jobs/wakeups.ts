/**
 * The wake-ups one engine sends without awaiting them: a released (or freed) coordination key
 * promotes the parked executions waiting on it, and a unit's or child's terminal record wakes its
 * readers — here at once through the in-process signals, elsewhere through the wait list.
 *
 * @module
 */
import type { Logger } from '../../dsl/context.js';
import type { JobQueue } from '../../ports/queue.js';
import type { WaitList } from '../../ports/wait-list.js';
import type { ExecutionRecord } from '../../ports/store.js';
import type { UnitSignals } from '../run/async/port.js';
import type { SettleListener } from '../run/run-state.js';
import { wakeReaders } from './async/park.js';
import { wake } from './park.js';
import type { DetachedWork } from './detached-work.js';

/** What {@link Wakeups} needs from the engine. */
export interface WakeupDeps {
  /** The engine's queue; without one nothing is parked, so nothing is woken. */
  readonly queue: JobQueue | undefined;
  readonly waitList: WaitList | undefined;
  /** In-process notifications of a unit's terminal record. */
  readonly signals: UnitSignals;
  /** Where each wake-up is tracked until it settles. */
  readonly detached: DetachedWork;
  readonly logger: Logger;
}

/** The engine's wake-ups: {@link released} for coordination keys, {@link executionSettled} for async units. */
export class Wakeups implements SettleListener {
  readonly #deps: WakeupDeps;

  /** `deps`: the engine's queue and wait lists, unit signals, detached-work tracker and logger. */
  constructor(deps: WakeupDeps) {
    this.#deps = deps;
  }

  /** Wake-on-release: promotes the waiters of a released or freed key (a property, so it can be handed on as a hook). */
  readonly released = (primitive: 'lock' | 'semaphore' | 'ordered_lock', key: string): void => {
    const { queue, waitList, detached, logger } = this.#deps;
    if (queue)
      detached.detach(wake({ queue, waitList }, primitive, key), (error) =>
        logger.warn({ err: error, key }, 'wake-on-release failed; the fallback timer resumes the waiter'),
      );
  };

  /** A unit's or child's terminal record wakes its readers (fan-out elements have none). */
  executionSettled(record: ExecutionRecord): void {
    if (record.parentId === undefined || record.element !== undefined) return;
    const { queue, waitList, signals, detached, logger } = this.#deps;
    signals.notify(record.id);
    if (queue)
      detached.detach(wakeReaders({ queue, waitList }, record.id), (error) =>
        logger.warn(
          { err: error, unitId: record.id },
          'waking the readers of an async unit failed; their fallback job resumes them',
        ),
      );
  }
}
