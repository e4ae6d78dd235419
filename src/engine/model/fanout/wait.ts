/**
 * How a fan-out map tells the scheduler that the execution must park: while its elements run
 * (`collect`), or while its completed elements are undone by jobs (`rollback`).
 *
 * @module
 */
import type { FanOutLedger } from '../../../ports/fanout.js';
import type { JobQueue } from '../../../ports/queue.js';
import type { RollbackFailure, Store } from '../../../ports/store.js';

/** What a fan-out map needs in a worker. */
export interface FanOutRuntime {
  readonly ledger: FanOutLedger;
  readonly queue: JobQueue | undefined;
  readonly store: Store;
  /**
   * Set for an operator's undo or cancel (a replay where it is called): completed elements are
   * undone in this process, highest index first, and their undo failures returned. Unset in a
   * worker: they are undone by jobs while the execution parks.
   */
  readonly undoInline?: (mapId: string, step: string) => Promise<readonly RollbackFailure[]>;
}

/** The execution parks on a fan-out map; its next job is enqueued by `parkOnFanOut`. */
export interface FanOutPark {
  readonly mapId: string;
  /** The map step. */
  readonly step: string;
  readonly phase: 'collect' | 'rollback';
  /** Collect: elements to dispatch once the parent is parked (redeliveries are deduplicated by job id). */
  readonly dispatch: readonly number[];
  /** Rollback: the element undone first (highest completed index). */
  readonly target: number;
  readonly settled: number;
  readonly total: number;
  /** Rollback: after the elements, undo completed steps with a completion sequence below this (undefined: all). */
  readonly below?: number | undefined;
  /** Rollback: how the execution fails once rollback is over. */
  readonly failedStep?: string | undefined;
  readonly error?: Error | undefined;
}

/**
 * Thrown by a fan-out map's undo (or compensate) in a worker when its completed elements must be
 * undone by jobs first. The scheduler turns it into a park; it never reaches user code.
 */
export class FanOutRollbackWait extends Error {
  readonly mapId: string;
  readonly step: string;
  readonly target: number;
  readonly total: number;
  /** The map step's completion sequence (undefined when the map itself failed). */
  readonly seq: number | undefined;

  constructor(init: {
    readonly mapId: string;
    readonly step: string;
    readonly target: number;
    readonly total: number;
    readonly seq: number | undefined;
  }) {
    super(`fan-out map "${init.step}": completed elements are undone by jobs first`);
    this.name = 'FanOutRollbackWait';
    this.mapId = init.mapId;
    this.step = init.step;
    this.target = init.target;
    this.total = init.total;
    this.seq = init.seq;
  }
}
