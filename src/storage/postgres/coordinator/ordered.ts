/**
 * The ordered lock of the Postgres coordinator: tickets entered in order, with a poison pill for
 * dead heads, out-of-turn completions, strict chains and epoch fencing, in tables
 * `coord_ordered` and `coord_ordered_positions`, through `coord_ordered_*`.
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
import { assertInteger, toNumber, type CoordinationCalls } from './calls.js';

interface CountersRow {
  readonly epoch: string;
  readonly issued: number;
  readonly last_completed: number;
  readonly in_flight: number | null;
  readonly first_failed: number | null;
}

interface EnterRow {
  readonly outcome: 'entered' | 'wait' | 'chain_failed' | 'stale' | 'passed';
  readonly head: number | null;
  readonly poisoned_in_ms: string | null;
  readonly first_failed: number | null;
  readonly epoch: string | null;
}

/** The ordered-lock calls. Every age (heartbeat, wait, advance) is on the database clock. */
export class PostgresOrdered {
  readonly #calls: CoordinationCalls;
  /** Per key, the last ticket call of this process in flight: the next one goes after it. */
  readonly #tickets = new Map<string, Promise<unknown>>();

  /** @param calls - The coordinator's SQL calls. */
  constructor(calls: CoordinationCalls) {
    this.#calls = calls;
  }

  /**
   * See `Coordinator.orderedTicket`: the next position of the current epoch. The tickets of one
   * key are asked for one after another, so this process's positions follow the order of its
   * calls (concurrent calls on a pool's connections would reach the database in any order).
   */
  async ticket(key: string): Promise<OrderedTicket> {
    const previous = this.#tickets.get(key) ?? Promise.resolve();
    const call = previous
      .catch(() => undefined)
      .then(() => this.#calls.one<{ nonce: number; epoch: string }>('ordered-ticket', 'ordered_ticket', [key]));
    this.#tickets.set(key, call);
    try {
      const row = await call;
      return { key, nonce: row.nonce, epoch: toNumber(row.epoch) };
    } finally {
      if (this.#tickets.get(key) === call) this.#tickets.delete(key);
    }
  }

  /**
   * See `Coordinator.orderedEnter`.
   *
   * @throws RangeError on a `poisonMs` that is not an integer ≥ 0, or a position never issued in
   * the current epoch.
   */
  async enter(request: OrderedEnterRequest): Promise<OrderedEnterResult> {
    assertInteger('poisonMs', request.poisonMs, 0);
    const row = await this.#calls.one<EnterRow>('ordered-enter', 'ordered_enter', [
      request.key,
      request.nonce,
      request.epoch,
      request.poisonMs,
      request.strict,
      JSON.stringify(request.holder),
    ]);
    switch (row.outcome) {
      case 'wait':
        return {
          outcome: 'wait',
          head: row.head ?? 0,
          ...(row.poisoned_in_ms === null ? {} : { poisonedInMs: toNumber(row.poisoned_in_ms) }),
        };
      case 'chain_failed':
        return { outcome: 'chain_failed', firstFailed: row.first_failed ?? 0 };
      case 'stale':
        return { outcome: 'stale', epoch: toNumber(row.epoch ?? 0) };
      case 'entered':
      case 'passed':
        return { outcome: row.outcome };
    }
  }

  /** See `Coordinator.orderedHeartbeat`: `false` unless `ticket` is the one in flight. */
  async heartbeat(ticket: OrderedTicket): Promise<boolean> {
    const row = await this.#calls.one<{ coord_ordered_heartbeat: boolean }>('ordered-heartbeat', 'ordered_heartbeat', [
      ticket.key,
      ticket.nonce,
      ticket.epoch,
    ]);
    return row.coord_ordered_heartbeat;
  }

  /** See `Coordinator.orderedComplete`: a completion out of turn is remembered, not applied. */
  async complete(request: OrderedCompleteRequest): Promise<OrderedState> {
    const row = await this.#calls.one<CountersRow>('ordered-complete', 'ordered_complete', [
      request.key,
      request.nonce,
      request.epoch,
      request.failed,
      request.strict,
    ]);
    return toState(request.key, row);
  }

  /** See `Coordinator.orderedState`; reading a key never creates it. */
  async state(key: string): Promise<OrderedState> {
    return toState(key, await this.#calls.one<CountersRow>('ordered-state', 'ordered_state', [key]));
  }

  /** See `Coordinator.orderedSkip`: a real advance past the head, if any is outstanding. */
  async skip(key: string): Promise<OrderedState> {
    return toState(key, await this.#calls.one<CountersRow>('ordered-skip', 'ordered_skip', [key]));
  }

  /** See `Coordinator.orderedReset`: a new epoch with zero counters, notified. */
  async reset(key: string): Promise<OrderedState> {
    return toState(key, await this.#calls.one<CountersRow>('ordered-reset', 'ordered_reset', [key]));
  }
}

function toState(key: string, row: CountersRow): OrderedState {
  return {
    key,
    epoch: toNumber(row.epoch),
    issued: row.issued,
    lastCompleted: row.last_completed,
    inFlight: row.in_flight ?? undefined,
    firstFailed: row.first_failed ?? undefined,
    drained: row.last_completed >= row.issued,
  };
}
