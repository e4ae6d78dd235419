/**
 * The ordered lock of the memory coordinator: tickets entered in order, with a poison pill for
 * dead heads, out-of-turn completions, strict chains and epoch fencing.
 *
 * @module
 */
import type {
  OrderedCompleteRequest,
  OrderedEnterRequest,
  OrderedEnterResult,
  OrderedState,
  OrderedTicket,
} from '../../../ports/coordinator.js';
import { assertInteger, type PrimitiveContext } from './context.js';
import { newOrderedEntry, orderedView, passHead, startBatch, type OrderedEntry } from './ordered-entry.js';

/** Dead heads the poison pill passes over in one call at most. */
const MAX_POISON_PASSES = 64;

/**
 * The ordered-lock entries, one per key. They are never swept: the epoch is what makes the
 * tickets of an old batch stale.
 */
export class MemoryOrdered {
  readonly #context: PrimitiveContext;
  readonly #ordered = new Map<string, OrderedEntry>();

  /** @param context - The shared tick and notifier. */
  constructor(context: PrimitiveContext) {
    this.#context = context;
  }

  /** See `Coordinator.orderedTicket`: the next position of the current epoch. */
  ticket(key: string): OrderedTicket {
    const now = this.#context.tick();
    const entry = this.#entry(key);
    if (entry.epoch === 0) entry.epoch = now;
    // A fresh batch: its first head counts its age from now.
    if (entry.issued === entry.lastCompleted) entry.advancedAt = now;
    entry.issued += 1;
    entry.seen.set(entry.issued, now);
    return { key, nonce: entry.issued, epoch: entry.epoch };
  }

  /**
   * See `Coordinator.orderedEnter`.
   *
   * @throws RangeError on a `poisonMs` that is not an integer ≥ 0, or a position never issued in
   * the current epoch.
   */
  enter(request: OrderedEnterRequest): OrderedEnterResult {
    assertInteger('poisonMs', request.poisonMs, 0);
    const now = this.#context.tick();
    const entry = this.#entry(request.key);
    if (request.epoch !== entry.epoch) return { outcome: 'stale', epoch: entry.epoch };
    if (!Number.isInteger(request.nonce) || request.nonce < 1 || request.nonce > entry.issued) {
      throw new RangeError(
        `ordered lock '${request.key}': position ${request.nonce} was never issued in epoch ${entry.epoch}`,
      );
    }
    const walked = walk(entry, request, now);
    const result = walked.result ?? { outcome: 'wait', head: entry.lastCompleted + 1 };
    if (walked.moved) {
      this.#context.notify('ordered', request.key);
      if (entry.lastCompleted >= entry.issued) {
        startBatch(entry, now);
        return { outcome: 'passed' };
      }
    }
    if (result.outcome === 'entered') {
      entry.inFlight = request.nonce;
      entry.heartbeatAt = now;
    } else if (result.outcome === 'wait') {
      entry.seen.set(request.nonce, now);
    }
    return result;
  }

  /** See `Coordinator.orderedHeartbeat`: `false` unless `ticket` is the one in flight. */
  heartbeat(ticket: OrderedTicket): boolean {
    const now = this.#context.tick();
    const entry = this.#ordered.get(ticket.key);
    if (entry === undefined || entry.epoch !== ticket.epoch || entry.inFlight !== ticket.nonce) return false;
    entry.heartbeatAt = now;
    return true;
  }

  /** See `Coordinator.orderedComplete`: a completion out of turn is remembered, not applied. */
  complete(request: OrderedCompleteRequest): OrderedState {
    const now = this.#context.tick();
    const entry = this.#entry(request.key);
    const outstanding =
      request.epoch === entry.epoch && request.nonce > entry.lastCompleted && request.nonce <= entry.issued;
    if (!outstanding) return orderedView(request.key, entry);
    // The lowest strict failure poisons the chain; one behind the cursor is a replay and ignored.
    if (request.failed && request.strict)
      entry.firstFailed = Math.min(entry.firstFailed ?? request.nonce, request.nonce);
    // Out of turn (e.g. a chain_failed halt): remembered, and passed over when the head gets here.
    if (request.nonce !== entry.lastCompleted + 1) entry.done.add(request.nonce);
    else this.#advanceHead(request.key, entry, now);
    return orderedView(request.key, entry);
  }

  /** See `Coordinator.orderedState`; reading a key never creates it. */
  state(key: string): OrderedState {
    this.#context.tick();
    return orderedView(key, this.#ordered.get(key) ?? newOrderedEntry());
  }

  /** See `Coordinator.orderedSkip`: a real advance past the head, if any is outstanding. */
  skip(key: string): OrderedState {
    const now = this.#context.tick();
    const entry = this.#entry(key);
    if (entry.lastCompleted < entry.issued) this.#advanceHead(key, entry, now);
    return orderedView(key, entry);
  }

  /** See `Coordinator.orderedReset`: a new epoch with zero counters, notified. */
  reset(key: string): OrderedState {
    const now = this.#context.tick();
    const entry = this.#entry(key);
    startBatch(entry, now);
    this.#context.notify('ordered', key);
    return orderedView(key, entry);
  }

  /** The keys that ever handed out a position (for the inspector). */
  liveKeys(): string[] {
    this.#context.tick();
    return [...this.#ordered].filter(([, entry]) => entry.epoch !== 0).map(([key]) => key);
  }

  #entry(key: string): OrderedEntry {
    let entry = this.#ordered.get(key);
    if (entry === undefined) {
      entry = newOrderedEntry();
      this.#ordered.set(key, entry);
    }
    return entry;
  }

  /** A real advance past the head (completed or skipped); drains the key when nothing is left. */
  #advanceHead(key: string, entry: OrderedEntry, now: number): void {
    passHead(entry);
    this.#context.notify('ordered', key);
    if (entry.lastCompleted >= entry.issued) startBatch(entry, now);
    else entry.advancedAt = now;
  }
}

interface Walked {
  /** The outcome, `undefined` when the pass budget ran out first. */
  readonly result: OrderedEnterResult | undefined;
  /** Whether at least one dead head was passed over (not a real advance). */
  readonly moved: boolean;
}

/** Judges `request` against the head, passing over up to `MAX_POISON_PASSES` dead heads. */
function walk(entry: OrderedEntry, request: OrderedEnterRequest, now: number): Walked {
  let result: OrderedEnterResult | undefined;
  let moved = false;
  for (let pass = 0; pass < MAX_POISON_PASSES && result === undefined; pass++) {
    const head = entry.lastCompleted + 1;
    if (request.nonce <= entry.lastCompleted) result = { outcome: 'passed' };
    else if (request.strict && entry.firstFailed !== undefined && entry.firstFailed < request.nonce) {
      result = { outcome: 'chain_failed', firstFailed: entry.firstFailed };
    } else if (request.nonce === head) result = { outcome: 'entered' };
    else {
      // The poison pill: a head with no sign of life for longer than `poisonMs` is passed over.
      // Its sign of life is its heartbeat in flight, else its latest ticket or wait, or the
      // last real advance of the cursor, whichever is latest.
      const lastSign =
        entry.inFlight === head ? entry.heartbeatAt : Math.max(entry.advancedAt, entry.seen.get(head) ?? 0);
      if (now - lastSign <= request.poisonMs)
        result = { outcome: 'wait', head, poisonedInMs: request.poisonMs - (now - lastSign) + 1 };
      else {
        passHead(entry);
        moved = true;
      }
    }
  }
  return { result, moved };
}
