/**
 * The events of schedules, and the small hub `schedules.subscribe` listens on.
 *
 * @module
 */
import type { Middleware } from '../engine/model/events.js';
import type { ErrorJSON } from '../errors.js';
import type { MissedPolicy } from './types.js';

interface Base {
  readonly scheduleId: string;
  readonly reactor: string;
  /** Engine clock time, ms. */
  readonly at: number;
}

/** Every event of a schedule. Discriminated on `type`. */
export type ScheduleEvent =
  /** A tick started its execution (`replay`: another worker had started it already; `caughtUp`: a missed tick under `catch_up_one`). */
  | (Base & {
      readonly type: 'schedule.ticked';
      readonly tickAt: number;
      readonly executionId: string;
      readonly replay: boolean;
      readonly caughtUp: boolean;
    })
  /** Ticks passed without an execution (nothing ran at their time); `count` of them, from `from` to `to`. */
  | (Base & {
      readonly type: 'schedule.missed';
      readonly count: number;
      readonly from: number;
      readonly to: number;
      readonly policy: MissedPolicy;
    })
  /** A tick could not start its execution (unknown reactor or input, the input function threw, the store failed). */
  | (Base & { readonly type: 'schedule.failed'; readonly tickAt: number; readonly error: ErrorJSON });

/** A listener of schedule events. */
export type ScheduleListener = (event: ScheduleEvent) => void;

/**
 * An engine middleware that also observes schedule events (the metrics of `ts-reactor/metrics`
 * and `ts-reactor/otel` do): the runtimes hand every such middleware to their schedules.
 */
export interface ScheduleObserver {
  onScheduleEvent(event: ScheduleEvent): void;
}

/**
 * A middleware of a runtime (`createEmbeddedEngine`, `createRedisRuntime`, a worker module's
 * `middleware`): the engine's events through `onEvent` and `enter`, and, with `onScheduleEvent`,
 * the schedules' (`schedule.ticked`, `schedule.missed`, `schedule.failed`), which are not engine
 * events: `engine.subscribe` and `onEvent` never see them.
 */
export type RuntimeMiddleware = Middleware & Partial<ScheduleObserver>;

/** The middleware among `middleware` that observe schedule events. */
export function scheduleObservers(middleware: readonly object[] | undefined): ScheduleObserver[] {
  return (middleware ?? []).filter(
    (m): m is ScheduleObserver => typeof (m as Partial<ScheduleObserver>).onScheduleEvent === 'function',
  );
}

/** Listeners, each isolated from the others' failures. */
export class ScheduleEvents {
  readonly #listeners = new Set<ScheduleListener>();

  /** Adds `listener`; returns the function that removes it. */
  subscribe(listener: ScheduleListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Sends `event` to every listener. */
  emit(event: ScheduleEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // a listener's failure is its own
      }
    }
  }
}
