/**
 * Counted lock calls after a lost reply (docs/decisions/065). A re-entrant acquire, a release and
 * a hand-over each count; whether a call whose reply was lost took effect is read from the lock
 * (its owner, its nesting against what this process knew before the call), and only a call that
 * did not is sent again.
 *
 * @module
 */
import type { HeldLocks } from '../held-locks.js';
import { settleAfterOutage, type ScriptArg } from '../script.js';
import { scripts, type LockAcquireReply, type LockReleaseReply, type LockTransferReply } from '../scripts.js';
import type { RedisContext } from './context.js';

/**
 * Settles a `lock-acquire` whose reply was lost: `owner` holding the key at a higher nesting than
 * before is the lost call's effect; otherwise the call is sent again.
 *
 * @param keys - The lock's keys (`lock`, `fence`), as sent.
 * @param args - The script's arguments, as sent.
 */
export function acquireAfterOutage(
  context: RedisContext,
  held: HeldLocks,
  error: unknown,
  key: string,
  owner: string,
  keys: readonly string[],
  args: readonly ScriptArg[],
): Promise<LockAcquireReply> {
  const before = held.nesting(key, owner);
  return settleAfterOutage<LockAcquireReply>(
    context.redis,
    'lock-acquire',
    error,
    async () => {
      const state = await context.run(scripts.lockState, keys.slice(0, 1), []);
      return state?.holder.owner === owner && state.nesting > before
        ? { acquired: true, token: state.token, nesting: state.nesting }
        : undefined;
    },
    () => context.run(scripts.lockAcquire, keys, args),
  );
}

/**
 * Settles a `lock-release` whose reply was lost: the key no longer held by `owner`, or held at a
 * lower nesting than before, is the lost call's effect; otherwise the call is sent again.
 *
 * @param keys - The lock's keys (`lock`, `fence`), as sent.
 * @param args - The script's arguments, as sent.
 */
export function releaseAfterOutage(
  context: RedisContext,
  held: HeldLocks,
  error: unknown,
  key: string,
  owner: string,
  keys: readonly string[],
  args: readonly ScriptArg[],
): Promise<LockReleaseReply> {
  const before = held.nesting(key, owner);
  return settleAfterOutage<LockReleaseReply>(
    context.redis,
    'lock-release',
    error,
    async () => {
      const state = await context.run(scripts.lockState, keys.slice(0, 1), []);
      // Not held by the owner any more: released (freed or granted) when it held the key; else sending again is a harmless no-op.
      if (state?.holder.owner !== owner) return before > 0 ? { released: true, nesting: 0 } : undefined;
      return state.nesting < before ? { released: true, nesting: state.nesting } : undefined;
    },
    () => context.run(scripts.lockRelease, keys, args),
  );
}

/**
 * Settles a `lock-transfer` from `from` to `to` whose reply was lost: held by `to` is a
 * hand-over, by `from` at a lower nesting a release; otherwise the call is sent again.
 *
 * @param keys - The lock's keys (`lock`, `fence`), as sent.
 * @param args - The script's arguments, as sent.
 */
export function transferAfterOutage(
  context: RedisContext,
  held: HeldLocks,
  error: unknown,
  key: string,
  from: string,
  to: string,
  keys: readonly string[],
  args: readonly ScriptArg[],
): Promise<LockTransferReply> {
  const before = held.nesting(key, from);
  return settleAfterOutage<LockTransferReply>(
    context.redis,
    'lock-transfer',
    error,
    async () => {
      const state = await context.run(scripts.lockState, keys.slice(0, 1), []);
      if (state?.holder.owner === to) return { handedOver: true, token: state.token };
      if (state?.holder.owner !== from) return { handedOver: false, released: false, nesting: 0 };
      return state.nesting < before ? { handedOver: false, released: true, nesting: state.nesting } : undefined;
    },
    () => context.run(scripts.lockTransfer, keys, args),
  );
}
