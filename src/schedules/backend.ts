/**
 * `ScheduleBackend`: where schedule definitions live and what delivers their ticks — the
 * embedded pool's timers on the engine clock (`memory.ts`), or BullMQ's job schedulers on Redis
 * (`src/queue/bullmq-schedules.ts`).
 *
 * @module
 */
import type { ScheduleDefinition, ScheduleFailure } from './types.js';

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
