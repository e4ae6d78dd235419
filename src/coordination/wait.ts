import type { ChangeWatch, LockAcquireRequest, LockGrant, PrimitiveKind } from '../ports/coordinator.js';
import { monotonicNow } from './deadline.js';
import { fastPathsOf } from './fast-paths.js';
import type { CoordinationScope } from './scope.js';

/** One try at taking something: done with a value, or busy (optionally with a hint when to retry). */
export type Attempt<T> =
  | { readonly done: true; readonly value: T }
  | { readonly done: false; readonly retryAfterMs?: number; readonly holder?: string };

/** `ms` ± 25 %, so waiters that started together do not poll together. */
function jitter(ms: number): number {
  return ms * (0.75 + Math.random() * 0.5);
}

/** Longest sleep between tries when no release notification arrives (a releaser may have died). */
const MAX_POLL_MS = 1_000;

/**
 * Tries until done or until `waitMs` has passed, sleeping on the key's release notification
 * (with a timed fallback; with no notification at all, the timed sleep alone: a poll) between
 * tries. Never a busy loop. Returns `undefined` on timeout, with the last holder seen.
 *
 * From the second try on, when the coordinator can watch a key, the watch starts *before* the
 * try (docs/decisions/030): a release that lands while the try is in flight wakes the waiter at
 * once instead of being missed until the fallback poll. An uncontended first try watches nothing.
 *
 * With `offer` (a lock), every wait on a watch also offers to take the key when this process
 * releases it (docs/decisions/037): a grant ends the wait holding the key, with no further try.
 * `offer.value` gets the monotonic time the wait began (the offer was made no earlier): the
 * grant's lease was set after it (docs/decisions/063).
 */
export async function waitUntil<T>(
  scope: CoordinationScope,
  target: {
    readonly kind: PrimitiveKind;
    readonly key: string;
    readonly waitMs: number;
    readonly offer?: {
      readonly request: LockAcquireRequest;
      readonly value: (grant: LockGrant, offeredAt: number) => T;
    };
  },
  attempt: () => Promise<Attempt<T>>,
): Promise<
  { readonly value: T } | { readonly timedOut: true; readonly waitedMs: number; readonly holder?: string | undefined }
> {
  const start = scope.clock.now();
  let poll = 25;
  let watch: ChangeWatch | undefined;
  try {
    for (;;) {
      const result = await attempt();
      if (result.done) return { value: result.value };
      const waited = scope.clock.now() - start;
      const remaining = target.waitMs - waited;
      if (remaining <= 0) return { timedOut: true, waitedMs: waited, holder: result.holder };
      const hint = result.retryAfterMs === undefined ? poll : Math.max(1, Math.min(result.retryAfterMs, poll));
      const fast = fastPathsOf(scope.coordinator); // read only once a try was refused: an uncontended take never needs it
      watch ??= target.offer === undefined ? undefined : fast.watch(target.kind, target.key, target.offer.request);
      const offeredAt = target.offer === undefined ? 0 : monotonicNow(scope.clock);
      const grant =
        watch === undefined
          ? await fast.waitForChange(scope.clock, target.kind, target.key, Math.min(remaining, hint))
          : await watch.wait(Math.min(remaining, jitter(hint)));
      if (grant !== undefined && target.offer !== undefined) return { value: target.offer.value(grant, offeredAt) };
      // The next watch starts before the last one ends, so the channel stays subscribed between tries.
      const next = fast.watch(target.kind, target.key, target.offer?.request);
      watch?.close();
      watch = next;
      poll = Math.min(poll * 2, MAX_POLL_MS);
    }
  } finally {
    watch?.close();
  }
}
