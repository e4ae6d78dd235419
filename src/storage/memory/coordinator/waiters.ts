/**
 * The in-process listeners behind `waitForChange`, and `close()` waking them all.
 *
 * @module
 */
import type { Clock } from '../../../ports/clock.js';
import type { PrimitiveKind } from '../../../ports/coordinator.js';

/**
 * Listeners keyed by `kind + key`. A wait ends at its timeout on the clock, on a notify of its key,
 * on the caller's signal, or on {@link Waiters.close}; it never rejects.
 */
export class Waiters {
  readonly #clock: Clock;
  readonly #listeners = new Map<string, Set<() => void>>();
  #closed = false;

  /** @param clock - The clock the timeouts sleep on. */
  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /**
   * Waits until a change of `kind` + `key` is notified, `timeoutMs` passes, `signal` aborts or the
   * waiters close. Resolves at once when already closed or aborted.
   */
  wait(kind: PrimitiveKind, key: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.#closed || signal?.aborted === true) return Promise.resolve();
    const id = listenerId(kind, key);
    const stop = new AbortController();
    const wake = (): void => stop.abort();
    const listeners = this.#listeners.get(id) ?? new Set<() => void>();
    this.#listeners.set(id, listeners);
    listeners.add(wake);
    signal?.addEventListener('abort', wake, { once: true });
    // The sleep is registered before returning, so a manual clock advanced next resolves it.
    return this.#clock.sleep(Math.max(0, timeoutMs), stop.signal).then(
      () => this.#unlisten(id, wake, signal),
      () => this.#unlisten(id, wake, signal),
    );
  }

  /** Wakes every waiter of `kind` + `key`. */
  notify(kind: PrimitiveKind, key: string): void {
    const listeners = this.#listeners.get(listenerId(kind, key));
    if (listeners === undefined) return;
    for (const wake of [...listeners]) wake();
  }

  /** Wakes every waiter; later waits resolve at once. */
  close(): void {
    this.#closed = true;
    const listeners = [...this.#listeners.values()].flatMap((set) => [...set]);
    this.#listeners.clear();
    for (const wake of listeners) wake();
  }

  #unlisten(id: string, wake: () => void, signal: AbortSignal | undefined): void {
    signal?.removeEventListener('abort', wake);
    const listeners = this.#listeners.get(id);
    if (listeners === undefined) return;
    listeners.delete(wake);
    if (listeners.size === 0) this.#listeners.delete(id);
  }
}

function listenerId(kind: PrimitiveKind, key: string): string {
  return `${kind}\u0000${key}`;
}
