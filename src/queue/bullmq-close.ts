/**
 * A BullMQ worker's close that also ends during, or just after, a Redis outage.
 *
 * BullMQ closes a worker by disconnecting its blocking connection and waiting for that client's
 * `end`. An ioredis client between two reconnection attempts (status `reconnecting`: no socket,
 * a retry timer armed) never emits `end` when disconnected: the disconnect only clears the
 * timer, the client stays `reconnecting`, and the close waits for ever (docs/decisions/094).
 * While the worker closes, such a client is disconnected as one that never connected is: at
 * once, failing its pending blocking read, with `end` emitted.
 *
 * @module
 */
import type { Worker } from 'bullmq';

/** The part of an ioredis client this module touches. */
interface BlockingClient {
  status: string;
  disconnect(reconnect?: boolean): void;
}

/** Closes `worker` (BullMQ's `close()`), ending its blocking client even if it is between reconnection attempts. */
export async function closeWorker(worker: Worker): Promise<void> {
  const client = blockingClientOf(worker);
  if (client) endWhenDisconnectedWhileReconnecting(client);
  await worker.close();
}

/**
 * The worker's blocking ioredis client, once its connection's set-up is over (BullMQ's own close
 * handles a connection still setting up: it disconnects it without waiting); read at once, as
 * BullMQ's `client` promise waits for that set-up.
 */
function blockingClientOf(worker: Worker): BlockingClient | undefined {
  const connection = blockingConnectionOf(worker);
  if (connection?.status !== 'ready') return undefined;
  const client = connection._client;
  return isBlockingClient(client) ? client : undefined;
}

/** BullMQ's wrapper of a connection (`RedisConnection`): its set-up state and its ioredis client. */
interface BullmqConnection {
  readonly status?: string;
  readonly _client?: unknown;
}

/**
 * The worker's blocking connection: BullMQ 5 keeps it on the worker (`blockingConnection`),
 * BullMQ 6 on the worker's Redis backend (`getBackend().blockingConnection`).
 */
function blockingConnectionOf(worker: Worker): BullmqConnection | undefined {
  const bullmq = worker as unknown as {
    readonly blockingConnection?: BullmqConnection;
    getBackend?: () => { readonly blockingConnection?: BullmqConnection } | undefined;
  };
  return typeof bullmq.getBackend === 'function' ? bullmq.getBackend()?.blockingConnection : bullmq.blockingConnection;
}

function isBlockingClient(value: unknown): value is BlockingClient {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as BlockingClient).status === 'string' &&
    typeof (value as BlockingClient).disconnect === 'function'
  );
}

/**
 * From now on, a final disconnect of `client` while it is `reconnecting` takes the path of a
 * client that never connected (`wait`): ioredis then runs its close handling at once, which
 * fails the queued commands ("Connection is closed.") and emits `end`.
 */
export function endWhenDisconnectedWhileReconnecting(client: BlockingClient): void {
  const disconnect = client.disconnect.bind(client);
  client.disconnect = (reconnect = false) => {
    if (!reconnect && client.status === 'reconnecting') client.status = 'wait';
    disconnect(reconnect);
  };
}
