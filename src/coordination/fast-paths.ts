/**
 * The one place that reads a coordinator's optional fast paths (`Coordinator.fastPaths`, see
 * `ports/coordinator.ts`) and applies the fallback for each part a backend does not offer:
 * waiting for a key's change becomes a sleep on the caller's clock (a poll), a watch is absent,
 * and the listeners for freed keys, cancel announcements and notification health are never
 * called. Callers use the {@link FastPaths} it returns and never test for a part themselves.
 *
 * @module
 */
import type { Clock } from '../ports/clock.js';
import type {
  CancelAnnouncements,
  ChangeWatch,
  Coordinator,
  CoordinatorFastPaths,
  LockAcquireRequest,
  PrimitiveKind,
} from '../ports/coordinator.js';

/** A coordinator's fast paths with the fallbacks in place: every member callable. */
export interface FastPaths {
  /**
   * Resolves on a change of `key` of `kind`, after `timeoutMs`, or when `signal` aborts. Without
   * key-change notifications: after `timeoutMs` on `clock` (or at the abort), so the caller polls.
   */
  waitForChange(clock: Clock, kind: PrimitiveKind, key: string, timeoutMs: number, signal?: AbortSignal): Promise<void>;
  /** A watch started now, or `undefined` when the backend offers none (the caller then uses {@link waitForChange}). */
  watch(kind: PrimitiveKind, key: string, offer?: LockAcquireRequest): ChangeWatch | undefined;
  /** Subscribes to keys the backend freed on its own; without the part, nothing is ever reported. */
  onFreed(listener: (kind: 'lock', key: string) => void): () => void;
  /** The backend's cancel announcements, or `undefined` (the cancel marker is then read at each check). */
  readonly cancels: CancelAnnouncements | undefined;
  /** Announces a cancel when the backend can; a no-op without announcements. */
  announceCancel(executionId: string): Promise<void>;
  /** Whether release notifications are degraded now; never without the part. */
  wakeUpsDegraded(): boolean;
  /** Subscribes to changes of {@link wakeUpsDegraded}; without the part, nothing is ever reported. */
  onWakeUpsDegraded(listener: (degraded: boolean, detail: string | undefined) => void): () => void;
}

const unsubscribed = (): void => undefined;

/** The fallbacks alone: a coordinator without fast paths, or none at all. */
const NONE: FastPaths = build(undefined);
/** What {@link fastPathsOf} built, by the `fastPaths` object it was built from (read once per call, built once per object). */
const built = new WeakMap<CoordinatorFastPaths, FastPaths>();

/** The fast paths of `coordinator` (none when there is no coordinator), with the fallbacks in place. */
export function fastPathsOf(coordinator: Coordinator | undefined): FastPaths {
  const parts = coordinator?.fastPaths;
  if (parts === undefined) return NONE;
  let paths = built.get(parts);
  if (paths === undefined) {
    paths = build(parts);
    built.set(parts, paths);
  }
  return paths;
}

function build(parts: CoordinatorFastPaths | undefined): FastPaths {
  const { changes, watches, freed, cancels, health } = parts ?? {};
  return {
    waitForChange: (clock, kind, key, timeoutMs, signal) =>
      changes === undefined ? clock.sleep(timeoutMs, signal) : changes.waitForChange(kind, key, timeoutMs, signal),
    watch: (kind, key, offer) => watches?.watch(kind, key, offer),
    onFreed: (listener) => freed?.onFreed(listener) ?? unsubscribed,
    cancels,
    announceCancel: async (executionId) => cancels?.announceCancel(executionId),
    wakeUpsDegraded: () => health?.wakeUpsDegraded() === true,
    onWakeUpsDegraded: (listener) => health?.onWakeUpsDegraded(listener) ?? unsubscribed,
  };
}
