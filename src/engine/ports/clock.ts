/** Time as the engine sees it. Redis-backed coordination reads the server's clock instead. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms` (or at once when `signal` aborts). A manual clock advances virtual time. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Calls `fn` every `ms` until the returned function is called (keep-alive timers). */
  every(ms: number, fn: () => void): () => void;
  /**
   * A monotonic reading in ms (never jumps with wall-clock corrections), for hold deadlines.
   * Optional: a clock without it measures deadlines with `now()` (a manual clock is monotonic).
   */
  monotonic?(): number;
}

/** Identifiers for executions and holders. */
export interface Ids {
  /** A new, unique execution id. */
  executionId(): string;
}

/** The wall clock with real timers. */
export const systemClock: Clock = Object.freeze({
  now: () => Date.now(),
  sleep: (ms: number, signal?: AbortSignal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    }),
  every: (ms: number, fn: () => void) => {
    const timer = setInterval(fn, ms);
    timer.unref();
    return () => clearInterval(timer);
  },
  monotonic: () => performance.now(),
});

/** Random, sortable-enough ids: a time prefix plus random bytes. */
export const randomIds: Ids = Object.freeze({
  executionId: () => `${Date.now().toString(36)}-${crypto.randomUUID().slice(0, 18)}`,
});
