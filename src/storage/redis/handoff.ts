/**
 * In-process lock hand-over (docs/decisions/037): waiters of this process that offer to take a
 * lock while they wait, oldest first. A release by this process hands the key straight to the
 * oldest offer (one script, no notification, no acquire round trip for the receiver), at most
 * {@link MAX_STREAK} times in a row per key and for at most {@link MAX_STREAK_MS}; then a plain
 * release gives the next process in line its turn (docs/decisions/059, 060).
 *
 * @module
 */
import type { LockAcquireRequest, LockGrant } from '../../ports/coordinator.js';
import { monotonic } from './held-locks.js';

/** Consecutive in-process hand-overs of one key before a plain release (decision 060). */
export const MAX_STREAK = 8;
/** How long after its first hand-over a streak may go on (decision 060): other processes wait about this much longer at most. */
export const MAX_STREAK_MS = 100;

/** A waiter's offer. `select` fires when a release picks it; `settle` ends its wait (with the grant, or without one: retry). */
export interface HandOffCandidate {
  readonly request: LockAcquireRequest;
  readonly select: () => void;
  readonly settle: (grant: LockGrant | undefined) => void;
}

/** The offers of one process, per lock key. */
export class HandOffs {
  readonly #offers = new Map<string, HandOffCandidate[]>();
  readonly #streaks = new Map<string, { readonly count: number; readonly since: number }>();
  readonly #now: () => number;

  /** `now`: a monotonic clock in ms (injected by tests). */
  constructor(now: () => number = monotonic) {
    this.#now = now;
  }

  /** Registers an offer; returns its withdrawal (a no-op once a release picked it). */
  offer(key: string, candidate: HandOffCandidate): () => void {
    const list = this.#offers.get(key) ?? [];
    list.push(candidate);
    this.#offers.set(key, list);
    return () => this.#remove(key, candidate);
  }

  /** Picks the oldest offer for a release of `key`, unless the streak is used up (then a plain release gives the key on). */
  take(key: string): HandOffCandidate | undefined {
    const list = this.#offers.get(key);
    const streak = this.#streaks.get(key);
    const usedUp = streak !== undefined && (streak.count >= MAX_STREAK || this.#now() - streak.since >= MAX_STREAK_MS);
    if (list === undefined || usedUp) {
      this.#streaks.delete(key);
      return undefined;
    }
    const candidate = list.shift()!;
    if (list.length === 0) this.#offers.delete(key);
    this.#streaks.set(key, { count: (streak?.count ?? 0) + 1, since: streak?.since ?? this.#now() });
    candidate.select();
    return candidate;
  }

  #remove(key: string, candidate: HandOffCandidate): void {
    const list = this.#offers.get(key);
    const at = list?.indexOf(candidate) ?? -1;
    if (list === undefined || at < 0) return;
    list.splice(at, 1);
    if (list.length === 0) this.#offers.delete(key);
  }
}
