/**
 * The one event stream at run time: the hub that fans events out to listeners and middleware.
 * The event types themselves are declared in `ports/events.ts` (re-exported here); the trace of
 * a run, the middleware hooks, the logs and the test matchers all read them.
 *
 * @module
 */
import type { Logger } from '../../dsl/context.js';
import type { ReactorEvent } from '../../ports/events.js';
import type { WorkHandle, WorkScope } from './work-scope.js';

export type { AsyncEvent, EventOf, ReactorEvent, ReactorEventType } from '../../ports/events.js';

/**
 * A middleware subscribes to the event stream. A hook that throws or rejects is logged and
 * never breaks the run.
 */
export interface Middleware {
  readonly name?: string;
  onEvent?(event: ReactorEvent): void | Promise<void>;
  /**
   * Opens a scope around a unit of work (a job run, a step, a compensate or undo, an enqueue);
   * the engine ends it exactly once. Tracing middleware (`ts-reactor/otel`) opens spans here.
   * Return `undefined` to stay out of it.
   */
  enter?(scope: WorkScope): WorkHandle | undefined;
}

/** A listener of {@link EventHub.subscribe}. */
export type EventListener = (event: ReactorEvent) => void;

/** Fans events out to listeners and middleware, isolating their failures. */
export class EventHub {
  readonly #listeners = new Set<EventListener>();
  readonly #middleware: readonly Middleware[];
  readonly #logger: Logger;

  constructor(middleware: readonly Middleware[], logger: Logger) {
    this.#middleware = middleware;
    this.#logger = logger;
  }

  /** Adds a listener; returns the function that removes it. */
  subscribe(listener: EventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  emit(event: ReactorEvent): void {
    for (const listener of this.#listeners) this.#guard('listener', () => listener(event), event);
    for (const m of this.#middleware) {
      if (m.onEvent) this.#guard(m.name ?? 'middleware', () => m.onEvent?.(event), event);
    }
  }

  #guard(name: string, fn: () => unknown, event: ReactorEvent): void {
    try {
      const out = fn();
      if (out instanceof Promise) out.catch((error: unknown) => this.#report(name, error, event));
    } catch (error) {
      this.#report(name, error, event);
    }
  }

  #report(name: string, error: unknown, event: ReactorEvent): void {
    const at = {
      executionId: event.executionId,
      reactor: event.reactor,
      ...('step' in event && event.step !== undefined ? { step: event.step } : {}),
      event: event.type,
    };
    this.#logger.error({ hook: name, ...at, err: error }, `event hook "${name}" failed; the run goes on`);
  }
}
