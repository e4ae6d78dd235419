/**
 * The state of one ordered-lock key and its pure transitions (cursor moves, batch restarts, views).
 *
 * @module
 */
import type { OrderedState } from '../../../ports/coordinator.js';

/** The state of one ordered-lock key. */
export interface OrderedEntry {
  /** 0 until the first ticket; then moves to max(epoch + 1, now) on every drain or reset. */
  epoch: number;
  issued: number;
  lastCompleted: number;
  inFlight: number | undefined;
  heartbeatAt: number;
  /** When the cursor last really advanced (or the batch started). */
  advancedAt: number;
  firstFailed: number | undefined;
  /** Latest sign of life of a position not in flight: its ticket, then each of its waits. */
  readonly seen: Map<number, number>;
  /** Positions completed out of turn, passed over when the head reaches them. */
  readonly done: Set<number>;
}

/** A key that never had a ticket: epoch 0, nothing issued. */
export function newOrderedEntry(): OrderedEntry {
  return {
    epoch: 0,
    issued: 0,
    lastCompleted: 0,
    inFlight: undefined,
    heartbeatAt: 0,
    advancedAt: 0,
    firstFailed: undefined,
    seen: new Map(),
    done: new Set(),
  };
}

/** Moves the cursor past the head and past every position already done behind it. */
export function passHead(entry: OrderedEntry): void {
  entry.lastCompleted += 1;
  entry.seen.delete(entry.lastCompleted);
  while (entry.done.delete(entry.lastCompleted + 1)) {
    entry.lastCompleted += 1;
    entry.seen.delete(entry.lastCompleted);
  }
  if (entry.inFlight !== undefined && entry.inFlight <= entry.lastCompleted) entry.inFlight = undefined;
}

/** A drain or reset: a new epoch (fencing every ticket of the old batch) with zero counters. */
export function startBatch(entry: OrderedEntry, now: number): void {
  entry.epoch = Math.max(entry.epoch + 1, now);
  entry.issued = 0;
  entry.lastCompleted = 0;
  entry.inFlight = undefined;
  entry.heartbeatAt = 0;
  entry.advancedAt = now;
  entry.firstFailed = undefined;
  entry.seen.clear();
  entry.done.clear();
}

/** The public {@link OrderedState} of `entry`. */
export function orderedView(key: string, entry: OrderedEntry): OrderedState {
  return {
    key,
    epoch: entry.epoch,
    issued: entry.issued,
    lastCompleted: entry.lastCompleted,
    inFlight: entry.inFlight,
    firstFailed: entry.firstFailed,
    drained: entry.lastCompleted >= entry.issued,
  };
}
