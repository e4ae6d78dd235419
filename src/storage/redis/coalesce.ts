/**
 * Write coalescing for a command connection: every command sent during one tick of the event
 * loop leaves in a single socket write (docs/decisions/041).
 *
 * ioredis writes each command to the socket at once, one system call per command; on loopback
 * that call (the kernel's TCP path and the server's wake-up) costs more than building the
 * command. A worker running many executions at once sends several commands per tick (replies
 * arrive together, and each continuation sends its next command), so the first command of a
 * tick corks the socket and a `process.nextTick` uncorks it once the tick's promise jobs have
 * run: the corked commands go out in one `writev`. Order, replies and errors are unchanged —
 * the commands are only written later in the same tick.
 *
 * @module
 */
import type { Redis } from 'ioredis';

const coalescing = new WeakSet<Redis>();

/** Makes `redis` coalesce the commands of one tick into one socket write. Idempotent. */
export function coalesceWrites(redis: Redis): void {
  if (coalescing.has(redis)) return;
  coalescing.add(redis);
  const send = redis.sendCommand.bind(redis);
  let corked = false;
  redis.sendCommand = (command, stream) => {
    const socket = redis.stream as Redis['stream'] | undefined;
    if (!corked && stream === undefined && redis.status === 'ready' && socket?.writable === true) {
      corked = true;
      socket.cork();
      process.nextTick(() => {
        corked = false;
        socket.uncork();
      });
    }
    return send(command, stream);
  };
}
