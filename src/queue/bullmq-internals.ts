/**
 * What ts-reactor reads of BullMQ's objects beyond its public API, in either major version: BullMQ
 * 5 keeps a queue's or worker's connections on the object itself, BullMQ 6 on a datastore backend
 * (`getBackend()`). The one place that tells the two apart (docs/decisions/096).
 *
 * @module
 */
import type { Queue, Worker } from 'bullmq';

/** BullMQ's wrapper of a connection (`RedisConnection`): its set-up state and its ioredis client. */
export interface BullmqConnection {
  readonly status?: string;
  readonly _client?: unknown;
}

/** The connections of a BullMQ object, where BullMQ 5 keeps them and where BullMQ 6's Redis backend does. */
interface Connections {
  /** The command connection's client, once set up. */
  readonly client?: Promise<unknown>;
  /** The command connection (BullMQ 5: a queue's or worker's own; BullMQ 6: its Redis backend's). */
  readonly connection?: BullmqConnection;
  /** A worker's blocking connection. */
  readonly blockingConnection?: BullmqConnection;
}

interface Internals extends Connections {
  /** BullMQ 6: the datastore backend, which holds the connections when it is Redis's. */
  getBackend?: () => Connections | undefined;
}

/** Whether `owner` keeps its connections on a backend object (BullMQ 6). */
export function onBackend(owner: Queue | Worker): boolean {
  return typeof (owner as unknown as Internals).getBackend === 'function';
}

/** Where `owner`'s connections are: the object (BullMQ 5) or its Redis backend (BullMQ 6; undefined on another backend). */
function connectionsOf(owner: Queue | Worker): Connections | undefined {
  const bullmq = owner as unknown as Internals;
  return onBackend(owner) ? bullmq.getBackend?.() : bullmq;
}

/** The command client of a BullMQ object, once set up; undefined on a backend that is not Redis's. */
export function commandClientOf(owner: Queue | Worker): Promise<unknown> | undefined {
  return connectionsOf(owner)?.client;
}

/** The command connection of a BullMQ object; undefined on a backend that is not Redis's. */
export function commandConnectionOf(owner: Queue | Worker): BullmqConnection | undefined {
  return connectionsOf(owner)?.connection;
}

/** A BullMQ worker's blocking connection. */
export function blockingConnectionOf(worker: Worker): BullmqConnection | undefined {
  return connectionsOf(worker)?.blockingConnection;
}
