/**
 * Counted lock calls after a lost reply (docs/decisions/065). A re-entrant acquire, a release and
 * a hand-over each count; whether a call whose reply was lost took effect is read from the lock
 * (its owner, its nesting against what this process knew before the call), and only a call that
 * did not is sent again.
 *
 * @module
 */
import type { HeldLocks } from '../held-locks.js';
import { settleAfterOutage, type ScriptArg, type ScriptDescriptor } from '../script.js';
import {
  scripts,
  type LockAcquireReply,
  type LockReleaseReply,
  type LockStateReply,
  type LockTransferReply,
} from '../scripts.js';
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
  return settleLockCall(context, scripts.lockAcquire, error, keys, args, (state) =>
    state?.holder.owner === owner && state.nesting > before
      ? { acquired: true, token: state.token, nesting: state.nesting }
      : undefined,
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
  return settleLockCall(context, scripts.lockRelease, error, keys, args, (state) => {
    // Not held by the owner any more: released (freed or granted) when it held the key; else sending again is a harmless no-op.
    if (state?.holder.owner !== owner) return before > 0 ? { released: true, nesting: 0 } : undefined;
    return state.nesting < before ? { released: true, nesting: state.nesting } : undefined;
  });
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
  return settleLockCall(context, scripts.lockTransfer, error, keys, args, (state) => {
    if (state?.holder.owner === to) return { handedOver: true, token: state.token };
    if (state?.holder.owner !== from) return { handedOver: false, released: false, nesting: 0 };
    return state.nesting < before ? { handedOver: false, released: true, nesting: state.nesting } : undefined;
  });
}

/**
 * Outlasts the outage of a lock call (`script`, sent with `keys` and `args`), then reads the lock
 * and asks `effect` what the lost call did: its reply, or undefined when it did nothing (then the
 * call is sent again).
 */
function settleLockCall<R>(
  context: RedisContext,
  script: ScriptDescriptor<R>,
  error: unknown,
  keys: readonly string[],
  args: readonly ScriptArg[],
  effect: (state: LockStateReply | undefined) => R | undefined,
): Promise<R> {
  return settleAfterOutage<R>(
    context.redis,
    script.name,
    error,
    async () => effect(await context.run(scripts.lockState, keys.slice(0, 1), [])),
    () => context.run(script, keys, args),
  );
}
