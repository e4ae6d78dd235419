/**
 * The schedules of the embedded pool: definitions and each schedule's pending tick in this
 * process ({@link MemorySchedules}), ticks delivered by timers on the engine clock, so a
 * `ManualClock` drives them in tests. Engines sharing one `MemorySchedules` deliver each tick
 * once between them; a pool that was stopped finds its pending ticks overdue when it starts again.
 *
 * @module
 */
import type { Clock } from '../ports/clock.js';
import type { ScheduleBackend, TickHandler } from '../ports/schedules.js';
import { nextTick } from './spec.js';
import type { ScheduleDefinition, ScheduleFailure } from './types.js';

interface Entry {
  readonly definition: ScheduleDefinition;
  /** The oldest tick not yet handled; undefined once none is left. */
  pending: number | undefined;
}

/** Schedules kept in this process: pass one to several embedded engines to share it. */
export class MemorySchedules {
  readonly #entries = new Map<string, Entry>();
  readonly #watchers = new Set<() => void>();
  readonly #failures = new Map<string, ScheduleFailure>();

  /** Keeps the outcome of `id`'s latest handled tick: its failure, or none (it started its execution). */
  noteOutcome(id: string, failure: ScheduleFailure | undefined): void {
    if (failure === undefined || !this.#entries.has(id)) this.#failures.delete(id);
    else this.#failures.set(id, failure);
  }

  /** The schedules whose latest handled tick failed. */
  failures(): ReadonlyMap<string, ScheduleFailure> {
    return new Map(this.#failures);
  }

  /** The entry of `id`. */
  entry(id: string): Entry | undefined {
    return this.#entries.get(id);
  }

  /** Every entry. */
  entries(): Entry[] {
    return [...this.#entries.values()];
  }

  /** Stores `definition`; a schedule whose timing did not change keeps its pending tick. */
  put(definition: ScheduleDefinition, firstTick: number | undefined): void {
    const before = this.#entries.get(definition.id);
    const same = before !== undefined && timing(before.definition) === timing(definition);
    this.#entries.set(definition.id, { definition, pending: same ? before.pending : firstTick });
    this.#changed();
  }

  /** Removes `id`; false when absent. */
  remove(id: string): boolean {
    const had = this.#entries.delete(id);
    this.#failures.delete(id);
    if (had) this.#changed();
    return had;
  }

  /** Moves `id`'s pending tick from `from` to `to`; false when another consumer moved it first. */
  take(id: string, from: number, to: number | undefined): boolean {
    const entry = this.#entries.get(id);
    if (entry?.pending !== from) return false;
    entry.pending = to;
    return true;
  }

  /** Calls `fn` after every change; returns the function that stops it. */
  watch(fn: () => void): () => void {
    this.#watchers.add(fn);
    return () => this.#watchers.delete(fn);
  }

  #changed(): void {
    for (const fn of this.#watchers) fn();
  }
}

function timing(d: ScheduleDefinition): string {
  return JSON.stringify([d.cron, d.everyMs, d.startAt, d.endAt]);
}

/** A {@link ScheduleBackend} over `schedules`, delivering ticks on `clock`. */
export function memoryScheduleBackend(schedules: MemorySchedules, clock: Clock): ScheduleBackend {
  return {
    put: async (definition, firstTick) => schedules.put(definition, firstTick),
    get: async (id) => schedules.entry(id)?.definition,
    list: async () => schedules.entries().map((e) => e.definition),
    remove: async (id) => schedules.remove(id),
    failures: async () => schedules.failures(),
    consume: (handler) => consumeOn(schedules, clock, handler),
    close: async () => undefined,
  };
}

/** One timer per schedule ({@link tickLoop}); a change to the schedules wakes every timer to read them again. */
function consumeOn(schedules: MemorySchedules, clock: Clock, handler: TickHandler): () => Promise<void> {
  const stop = new AbortController();
  const loops = new Map<string, Promise<void>>();
  let changed = new AbortController();
  const timer: Timer = { clock, handler, stop: stop.signal, changed: () => changed.signal };
  const arm = (): void => {
    for (const { definition } of schedules.entries()) {
      const { id } = definition;
      if (loops.has(id) || stop.signal.aborted) continue;
      loops.set(
        id,
        tickLoop(schedules, id, timer).finally(() => loops.delete(id)),
      );
    }
  };
  const unwatch = schedules.watch(() => {
    changed.abort();
    changed = new AbortController();
    arm();
  });
  queueMicrotask(arm); // after the caller's synchronous set-up (its subscriptions) is done
  return async () => {
    unwatch();
    stop.abort();
    await Promise.all(loops.values());
  };
}

interface Timer {
  readonly clock: Clock;
  readonly handler: TickHandler;
  readonly stop: AbortSignal;
  readonly changed: () => AbortSignal;
}

/** Sleeps until `id`'s pending tick, takes it (another consumer may have), hands it over; until the schedule is gone or done. */
async function tickLoop(schedules: MemorySchedules, id: string, timer: Timer): Promise<void> {
  const { clock, handler, stop } = timer;
  while (!stop.aborted) {
    const entry = schedules.entry(id);
    if (entry?.pending === undefined) return;
    const tick = entry.pending;
    const wait = tick - clock.now();
    if (wait > 0) {
      await clock.sleep(wait, AbortSignal.any([stop, timer.changed()]));
      continue;
    }
    if (!schedules.take(id, tick, nextTick(entry.definition, Math.max(clock.now(), tick)))) continue;
    const failure = await handler(entry.definition, tick).catch(() => undefined); // the handler reports its own failures
    schedules.noteOutcome(id, failure);
  }
}
