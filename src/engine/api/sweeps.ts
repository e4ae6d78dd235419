/**
 * `engine.sweep` and `engine.startSweeps`: the recovery sweep (decision 066), now or on a timer,
 * for an engine that can sweep; a report of a sweep that did not run otherwise.
 *
 * @module
 */
import type { SweepReport } from '../jobs/sweep.js';
import type { EngineParts } from './parts.js';

/** Runs one recovery sweep now; `ran: false` when this engine has no sweeper. */
export function sweepNow(deps: Pick<EngineParts, 'sweeper' | 'clock'>): Promise<SweepReport> {
  return (
    deps.sweeper?.sweep() ??
    Promise.resolve({
      ran: false,
      startedAt: deps.clock.now(),
      finishedAt: deps.clock.now(),
      checked: 0,
      requeued: 0,
      aborted: 0,
    })
  );
}

/** Starts this engine's sweep timer (a failed sweep is logged); the returned function stops it. */
export function startSweeps(deps: Pick<EngineParts, 'sweeper' | 'detached' | 'logger'>): () => void {
  return (
    deps.sweeper?.start((work) =>
      deps.detached.detach(work, (error) => deps.logger.warn({ err: error }, 'recovery sweep failed')),
    ) ?? (() => undefined)
  );
}
