/**
 * The schedules port: where schedule definitions live and what delivers their ticks — the
 * embedded pool's timers on the engine clock (`src/schedules/memory.ts`), or BullMQ's job
 * schedulers on Redis (`src/queue/bullmq-schedules.ts`) — and the JSON shapes a backend stores.
 *
 * @module
 */

/** What to do with the ticks that passed while nothing ran (no worker, a stopped pool, a late delivery). */
export type MissedPolicy = 'skip' | 'catch_up_one';

/** A schedule as stored: JSON only (a computed input is a name). */
export interface ScheduleDefinition {
  readonly v: 1;
  readonly id: string;
  readonly reactor: string;
  readonly cron?: { readonly pattern: string; readonly tz: string };
  /** The interval, ms. */
  readonly everyMs?: number;
  readonly input?: Record<string, unknown>;
  readonly inputFrom?: string;
  readonly missed: MissedPolicy;
  /** ms since the epoch. */
  readonly startAt?: number;
  /** ms since the epoch (exclusive). */
  readonly endAt?: number;
  /** When it was last upserted (engine clock, ms). */
  readonly updatedAt: number;
}

/** A tick that started nothing (`schedule.failed`), as the schedule's list shows it. */
export interface ScheduleFailure {
  /** The tick's time (ms). */
  readonly tickAt: number;
  /** When it failed (engine clock, ms). */
  readonly at: number;
  /** The error's code (`input_invalid`, `reactor_unknown` …), when it has one. */
  readonly code?: string;
  readonly message: string;
}

/**
 * What a backend calls for each delivered tick: the schedule, and the oldest tick not yet
 * handled. Resolves with the failure when the tick started nothing, which the backend keeps as
 * the schedule's latest outcome ({@link ScheduleBackend.failures}).
 */
export type TickHandler = (definition: ScheduleDefinition, tick: number) => Promise<ScheduleFailure | undefined>;

/** Stores schedules and delivers their ticks, each tick to one consumer (a duplicate is harmless: the tick's idempotency key). */
export interface ScheduleBackend {
  /** Stores `definition` (replacing one with its id); `firstTick` is its first tick after now. */
  put(definition: ScheduleDefinition, firstTick: number | undefined): Promise<void>;
  get(id: string): Promise<ScheduleDefinition | undefined>;
  list(): Promise<ScheduleDefinition[]>;
  /** Removes a schedule and its pending tick; false when there was none. */
  remove(id: string): Promise<boolean>;
  /** Starts delivering ticks to `handler` in this process; the returned function stops it (in-flight ticks finish). */
  consume(handler: TickHandler): () => Promise<void>;
  /** The schedules whose latest handled tick failed, by id, with that failure (as seen by any consumer). */
  failures?(): Promise<ReadonlyMap<string, ScheduleFailure>>;
  /** Releases connections (a Redis backend); the memory one has none. */
  close(): Promise<void>;
}
