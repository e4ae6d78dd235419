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
 * The close also waits for the worker's fetch loop, which may be waiting on the command
 * connection: when Redis has been down longer than a blocking read's timeout, BullMQ gives up the
 * read and asks the command connection for a job, and that connection (no limit of retries per
 * request) keeps the command until Redis is back. So while the worker closes, a command client
 * that was set up but is not connected (or loses its connection) is ended the same way: the
 * commands it holds fail with "Connection is closed.", and the loop ends (docs/decisions/162).
 *
 * @module
 */
import type { Worker } from 'bullmq';
import { blockingConnectionOf, commandConnectionOf, onBackend } from './bullmq-internals.js';

/** The part of an ioredis client this module touches. */
interface IoredisClient {
  status: string;
  disconnect(reconnect?: boolean): void;
  on?(event: 'reconnecting', listener: () => void): unknown;
  off?(event: 'reconnecting', listener: () => void): unknown;
}

/**
 * Closes `worker` (BullMQ's `close()`), ending its blocking client even if it is between
 * reconnection attempts, and its command client if it is not connected while the worker closes.
 */
export async function closeWorker(worker: Worker): Promise<void> {
  const connection = blockingConnectionOf(worker);
  const client = isIoredisClient(connection?._client) ? connection._client : undefined;
  // Read at once: BullMQ's `client` promise waits for the connection's set-up.
  if (client && connection?.status === 'ready') endWhenDisconnectedWhileReconnecting(client);
  else if (client && connection?.status === 'initializing' && onBackend(worker)) {
    // BullMQ 5 closes a connection still setting up without waiting. BullMQ 6 starts its fetch
    // loop before the blocking connection is set up, and its close waits for that set-up, which
    // lasts as long as Redis cannot be reached: ended here, the set-up fails at once and the
    // close goes on.
    endWhenDisconnectedWhileReconnecting(client);
    client.disconnect();
  }
  // Only a command connection that was set up: one still setting up is not waited for, and its
  // set-up's own commands must fail as BullMQ expects them to.
  const commandConnection = commandConnectionOf(worker);
  const command = commandConnection?.status === 'ready' ? commandConnection._client : undefined;
  const stopWatching = isIoredisClient(command) ? endWhileDown(command) : noop;
  try {
    await worker.close();
  } finally {
    stopWatching();
  }
}

/**
 * Ends `client` now if it is not connected, and later if it loses its connection, until the
 * returned function is called: its held commands fail at once instead of waiting for Redis.
 */
function endWhileDown(client: IoredisClient): () => void {
  const end = (): void => {
    if (client.status !== 'reconnecting' && client.status !== 'connecting') return;
    endWhenDisconnectedWhileReconnecting(client);
    client.disconnect();
  };
  end();
  // ioredis schedules each reconnection after it says `reconnecting`: ended once the event is handled.
  const onReconnecting = (): void => void setImmediate(end);
  client.on?.('reconnecting', onReconnecting);
  return () => void client.off?.('reconnecting', onReconnecting);
}

function noop(): void {
  // nothing to stop
}

function isIoredisClient(value: unknown): value is IoredisClient {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as IoredisClient).status === 'string' &&
    typeof (value as IoredisClient).disconnect === 'function'
  );
}

/**
 * From now on, a final disconnect of `client` while it is `reconnecting` takes the path of a
 * client that never connected (`wait`): ioredis then runs its close handling at once, which
 * fails the queued commands ("Connection is closed.") and emits `end`.
 */
export function endWhenDisconnectedWhileReconnecting(client: IoredisClient): void {
  const disconnect = client.disconnect.bind(client);
  client.disconnect = (reconnect = false) => {
    if (!reconnect && client.status === 'reconnecting') client.status = 'wait';
    disconnect(reconnect);
  };
}
