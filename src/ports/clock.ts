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

/** The longest delay one `setTimeout` keeps (2^31 − 1 ms, about 24.8 days); a longer one would fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

/** The wall clock with real timers. A sleep longer than one timer can hold is chained from several. */
export const systemClock: Clock = Object.freeze({
  now: () => Date.now(),
  sleep: (ms: number, signal?: AbortSignal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const until = Date.now() + ms;
      let timer = setTimeout(tick, Math.min(ms, MAX_TIMER_MS));
      function tick(): void {
        const left = until - Date.now();
        if (left > 0 && ms > MAX_TIMER_MS) timer = setTimeout(tick, Math.min(left, MAX_TIMER_MS));
        else done();
      }
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
