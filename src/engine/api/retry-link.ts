/**
 * The retried execution's side of a retry: a `run.retried` event naming the new execution,
 * published and appended to the (finished) source record's trace, so its history shows it.
 *
 * @module
 */
import type { Logger } from '../../dsl/context.js';
import type { EventHub, ReactorEvent } from '../model/events.js';
import type { Clock } from '../../ports/clock.js';
import type { Store } from '../../ports/store.js';
import { appendToTrace } from '../model/trace-bound.js';

/** What {@link linkRetry} needs. */
export interface RetryLinkDeps {
  readonly store: Store;
  readonly hub: EventHub;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The trace bound (`createEngine({ maxTraceEntries })`). */
  readonly maxTraceEntries: number;
}

/** Emits `run.retried` for `sourceId` and records it in the source's trace; a failed write is logged, never thrown. */
export async function linkRetry(deps: RetryLinkDeps, sourceId: string, retryExecutionId: string): Promise<void> {
  try {
    const source = await deps.store.get(sourceId);
    if (!source) return;
    const event: ReactorEvent = {
      type: 'run.retried',
      executionId: source.id,
      rootExecutionId: source.rootId,
      reactor: source.reactor,
      at: deps.clock.now(),
      retryExecutionId,
    };
    deps.hub.emit(event);
    await deps.store.save({ ...source, trace: appendToTrace(source.trace, deps.maxTraceEntries, event) });
  } catch (error) {
    deps.logger.warn({ err: error, executionId: sourceId }, 'could not record the retry in the source execution');
  }
}
