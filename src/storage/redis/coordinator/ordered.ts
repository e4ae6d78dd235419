/**
 * The ordered lock of the Redis coordinator: tickets, enter (poison pill), heartbeat, complete,
 * skip and reset, one hash per key (`ordered-*` scripts).
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
import { scripts, type OrderedCounters } from '../scripts.js';
import { assertInteger, type RedisContext } from './context.js';

/** The ordered-lock transitions. */
export class RedisOrdered {
  readonly #context: RedisContext;

  /** @param context - The connection, keys and script runner. */
  constructor(context: RedisContext) {
    this.#context = context;
  }

  /** See `Coordinator.orderedTicket`. */
  async ticket(key: string): Promise<OrderedTicket> {
    const reply = await this.#context.run(scripts.orderedTicket, [this.#context.keys.ordered(key)], []);
    return { key, nonce: reply.nonce, epoch: reply.epoch };
  }

  /** See `Coordinator.orderedEnter`. @throws RangeError on a `poisonMs` that is not an integer ≥ 0. */
  async enter(request: OrderedEnterRequest): Promise<OrderedEnterResult> {
    assertInteger('poisonMs', request.poisonMs, 0);
    const { keys } = this.#context;
    return this.#context.run(
      scripts.orderedEnter,
      [keys.ordered(request.key)],
      [
        request.nonce,
        request.epoch,
        request.poisonMs,
        request.strict ? '1' : '0',
        JSON.stringify(request.holder),
        keys.orderedChannel(request.key),
      ],
    );
  }

  /** See `Coordinator.orderedHeartbeat`. */
  async heartbeat(ticket: OrderedTicket): Promise<boolean> {
    return this.#context.run(
      scripts.orderedHeartbeat,
      [this.#context.keys.ordered(ticket.key)],
      [ticket.nonce, ticket.epoch],
    );
  }

  /** See `Coordinator.orderedComplete`. */
  async complete(request: OrderedCompleteRequest): Promise<OrderedState> {
    const { keys } = this.#context;
    const reply = await this.#context.run(
      scripts.orderedComplete,
      [keys.ordered(request.key)],
      [
        request.nonce,
        request.epoch,
        request.failed ? '1' : '0',
        request.strict ? '1' : '0',
        keys.orderedChannel(request.key),
      ],
    );
    return toOrderedState(request.key, reply);
  }

  /** See `Coordinator.orderedState`. */
  async state(key: string): Promise<OrderedState> {
    return toOrderedState(key, await this.#context.run(scripts.orderedState, [this.#context.keys.ordered(key)], []));
  }

  /** See `Coordinator.orderedSkip`. */
  async skip(key: string): Promise<OrderedState> {
    const { keys } = this.#context;
    return toOrderedState(
      key,
      await this.#context.run(scripts.orderedSkip, [keys.ordered(key)], [keys.orderedChannel(key)]),
    );
  }

  /** See `Coordinator.orderedReset`. */
  async reset(key: string): Promise<OrderedState> {
    const { keys } = this.#context;
    return toOrderedState(
      key,
      await this.#context.run(scripts.orderedReset, [keys.ordered(key)], [keys.orderedChannel(key)]),
    );
  }
}

function toOrderedState(key: string, counters: OrderedCounters): OrderedState {
  return {
    key,
    epoch: counters.epoch,
    issued: counters.issued,
    lastCompleted: counters.lastCompleted,
    inFlight: counters.inFlight === 0 ? undefined : counters.inFlight,
    firstFailed: counters.firstFailed === 0 ? undefined : counters.firstFailed,
    drained: counters.issued === counters.lastCompleted,
  };
}
