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

/** A lock call whose reply was lost: where it went, what this process knows, and what was sent. */
export interface LostLockCall {
  readonly context: RedisContext;
  /** This process's holds, read for the nesting before the call. */
  readonly held: HeldLocks;
  /** The connection error that lost the reply. */
  readonly error: unknown;
  readonly key: string;
  /** The lock's keys (`lock`, `fence`), as sent. */
  readonly keys: readonly string[];
  /** The script's arguments, as sent. */
  readonly args: readonly ScriptArg[];
}

/**
 * Settles a `lock-acquire` whose reply was lost: `owner` holding the key at a higher nesting than
 * before is the lost call's effect; otherwise the call is sent again.
 */
export function acquireAfterOutage(call: LostLockCall, owner: string): Promise<LockAcquireReply> {
  const before = call.held.nesting(call.key, owner);
  return settleLockCall(call, scripts.lockAcquire, (state) =>
    state?.holder.owner === owner && state.nesting > before
      ? { acquired: true, token: state.token, nesting: state.nesting }
      : undefined,
  );
}

/**
 * Settles a `lock-release` whose reply was lost: the key no longer held by `owner`, or held at a
 * lower nesting than before, is the lost call's effect; otherwise the call is sent again.
 */
export function releaseAfterOutage(call: LostLockCall, owner: string): Promise<LockReleaseReply> {
  const before = call.held.nesting(call.key, owner);
  return settleLockCall(call, scripts.lockRelease, (state) => {
    // Not held by the owner any more: released (freed or granted) when it held the key; else sending again is a harmless no-op.
    if (state?.holder.owner !== owner) return before > 0 ? { released: true, nesting: 0 } : undefined;
    return state.nesting < before ? { released: true, nesting: state.nesting } : undefined;
  });
}

/**
 * Settles a `lock-transfer` from `from` to `to` whose reply was lost: held by `to` is a
 * hand-over, by `from` at a lower nesting a release; otherwise the call is sent again.
 */
export function transferAfterOutage(call: LostLockCall, from: string, to: string): Promise<LockTransferReply> {
  const before = call.held.nesting(call.key, from);
  return settleLockCall(call, scripts.lockTransfer, (state) => {
    if (state?.holder.owner === to) return { handedOver: true, token: state.token };
    if (state?.holder.owner !== from) return { handedOver: false, released: false, nesting: 0 };
    return state.nesting < before ? { handedOver: false, released: true, nesting: state.nesting } : undefined;
  });
}

/**
 * Outlasts the outage of a lock call (`script`, sent with the call's keys and arguments), then reads the lock
 * and asks `effect` what the lost call did: its reply, or undefined when it did nothing (then the
 * call is sent again).
 */
function settleLockCall<R>(
  call: LostLockCall,
  script: ScriptDescriptor<R>,
  effect: (state: LockStateReply | undefined) => R | undefined,
): Promise<R> {
  const { context, error, keys, args } = call;
  return settleAfterOutage<R>(
    context.redis,
    script.name,
    error,
    async () => effect(await context.run(scripts.lockState, keys.slice(0, 1), [])),
    () => context.run(script, keys, args),
  );
}
