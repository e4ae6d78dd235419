/**
 * The waiters of one Postgres coordinator, woken by the notifications its LISTEN connection
 * receives: `waitForChange` and `watch`, wake-one for locks and semaphores.
 *
 * @module
 */
import type { ChangeWatch, LockGrant, PrimitiveKind } from '../../../ports/coordinator.js';

/** A waiter; returns false when it was woken already (a wake-one then tries the next). */
type Wake = () => boolean;

/** The notification payload of a change of `kind` + `key` (as the SQL functions send it). */
export function changePayload(kind: PrimitiveKind, key: string): string {
  return `${kind}:${key}`;
}

/**
 * Waiters keyed by notification payload, oldest first. A notification of a lock or semaphore
 * frees one place, so it wakes one waiter of this process (the oldest that is still waiting);
 * any other wakes them all.
 */
export class WakeUps {
  readonly #waiters = new Map<string, Set<Wake>>();
  #closed = false;

  /**
   * Waits until a change of `kind` + `key` is notified, `timeoutMs` passes, `signal` aborts,
   * {@link WakeUps.wakeAll} runs or the waiters close. Resolves at once when closed or aborted.
   */
  wait(kind: PrimitiveKind, key: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.#closed || signal?.aborted === true) return Promise.resolve();
    const id = changePayload(kind, key);
    return new Promise<void>((resolve) => {
      const done = (): boolean => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.#remove(id, done);
        resolve();
        return true;
      };
      const timer = setTimeout(done, Math.max(0, timeoutMs));
      signal?.addEventListener('abort', done, { once: true });
      this.#add(id, done);
    });
  }

  /**
   * Starts watching `kind` + `key` now for a wait that begins later: a change notified in
   * between resolves the next wait at once. Never offers grants.
   */
  watch(kind: PrimitiveKind, key: string): ChangeWatch {
    const id = changePayload(kind, key);
    let changed = this.#closed;
    let wake: (() => void) | undefined;
    const listener: Wake = () => {
      if (changed) return false;
      changed = true;
      wake?.();
      return true;
    };
    if (!changed) this.#add(id, listener);
    return {
      wait: (timeoutMs) =>
        changed
          ? Promise.resolve(undefined)
          : new Promise<LockGrant | undefined>((resolve) => {
              const done = (): void => {
                clearTimeout(timer);
                wake = undefined;
                resolve(undefined);
              };
              const timer = setTimeout(done, Math.max(0, timeoutMs));
              wake = done;
            }),
      close: () => this.#remove(id, listener),
    };
  }

  /** A notification arrived with `payload` (`<kind>:<key>`). */
  notify(payload: string): void {
    const waiters = this.#waiters.get(payload);
    if (waiters === undefined) return;
    const wakeOne = payload.startsWith('lock:') || payload.startsWith('semaphore:');
    for (const wake of [...waiters]) if (wake() && wakeOne) return;
  }

  /** Wakes every waiter: notifications may have been missed (listening began or began again). */
  wakeAll(): void {
    for (const wake of [...this.#waiters.values()].flatMap((set) => [...set])) wake();
  }

  /** Wakes every waiter; later waits resolve at once. */
  close(): void {
    this.#closed = true;
    this.wakeAll();
    this.#waiters.clear();
  }

  #add(id: string, wake: Wake): void {
    const waiters = this.#waiters.get(id) ?? new Set<Wake>();
    this.#waiters.set(id, waiters);
    waiters.add(wake);
  }

  #remove(id: string, wake: Wake): void {
    const waiters = this.#waiters.get(id);
    if (waiters === undefined) return;
    waiters.delete(wake);
    if (waiters.size === 0) this.#waiters.delete(id);
  }
}
