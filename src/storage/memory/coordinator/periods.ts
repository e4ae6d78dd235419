/**
 * The period marker of the memory coordinator: "done once in this bucket", expiring at a deadline.
 *
 * @module
 */
import type { PeriodMarkRequest } from '../../../ports/coordinator.js';
import { assertInteger, type PrimitiveContext } from './context.js';
import type { Sweepable } from './sweep.js';

/** The markers, `key + bucket → expiresAt` (and their notes). An expired marker is dropped when read. */
export class MemoryPeriods implements Sweepable {
  readonly #context: PrimitiveContext;
  readonly #periods = new Map<string, number>();
  readonly #notes = new Map<string, string>();

  /** @param context - The shared tick and notifier. */
  constructor(context: PrimitiveContext) {
    this.#context = context;
  }

  /** See `Coordinator.periodIsMarked`. */
  isMarked(key: string, bucket: string): boolean {
    return this.#marker(key, bucket, this.#context.tick()) !== undefined;
  }

  /**
   * See `Coordinator.periodMark`: `true` when this call set the marker (and notified the key).
   *
   * @throws RangeError on a `ttlMs` that is not an integer ≥ 1.
   */
  mark(request: PeriodMarkRequest): boolean {
    assertInteger('ttlMs', request.ttlMs, 1);
    const now = this.#context.tick();
    if (this.#marker(request.key, request.bucket, now) !== undefined) return false;
    const id = periodId(request.key, request.bucket);
    this.#periods.set(id, now + request.ttlMs);
    if (request.note === undefined || request.note === '') this.#notes.delete(id);
    else this.#notes.set(id, request.note);
    this.#context.notify('period', request.key);
    return true;
  }

  /** See `Coordinator.periodNote`: the live marker's note, `undefined` when unmarked or set without one. */
  note(key: string, bucket: string): string | undefined {
    if (this.#marker(key, bucket, this.#context.tick()) === undefined) return undefined;
    return this.#notes.get(periodId(key, bucket));
  }

  /** See `Coordinator.periodState`: the marker's remaining ms, `undefined` when unmarked. */
  state(key: string, bucket: string): number | undefined {
    const now = this.#context.tick();
    const expiresAt = this.#marker(key, bucket, now);
    return expiresAt === undefined ? undefined : expiresAt - now;
  }

  /** The live markers as key and bucket (for the inspector). */
  liveKeys(): { key: string; bucket: string }[] {
    const now = this.#context.tick();
    const live: { key: string; bucket: string }[] = [];
    for (const [id, expiresAt] of this.#periods) {
      const split = id.indexOf('\u0000');
      if (expiresAt > now) live.push({ key: id.slice(0, split), bucket: id.slice(split + 1) });
    }
    return live;
  }

  /** Drops expired markers. */
  sweep(now: number): void {
    for (const [id, expiresAt] of this.#periods) if (expiresAt <= now) this.#drop(id);
  }

  /** The expiry of a live marker, `undefined` when unmarked (an expired marker is dropped). */
  #marker(key: string, bucket: string, now: number): number | undefined {
    const id = periodId(key, bucket);
    const expiresAt = this.#periods.get(id);
    if (expiresAt === undefined) return undefined;
    if (expiresAt > now) return expiresAt;
    this.#drop(id);
    return undefined;
  }

  #drop(id: string): void {
    this.#periods.delete(id);
    this.#notes.delete(id);
  }
}

function periodId(key: string, bucket: string): string {
  return `${key}\u0000${bucket}`;
}
