/** Ordered-lock admission: a position at admission, wait for the turn holding nothing else. */
import type { CoordinationSpec } from '../dsl/coordination.js';
import type { OrderedEnterResult } from '../ports/coordinator.js';
import { OrderedLockStaleError } from '../errors.js';
import type { Admission } from './admission.js';
import { contention } from './contention.js';
import type { Holds } from './holds.js';
import type { CoordinationScope } from './scope.js';
import { waitUntil } from './wait.js';

type OrderedSpec = Extract<CoordinationSpec, { kind: 'ordered_lock' }>;

/**
 * Takes a position and waits for its turn. On entry, registers the completion (advancing the
 * cursor on every outcome, recording a strict failure) and a heartbeat so a slow holder is
 * never passed over. A caller that gives up hands its position back (completed out of turn),
 * so it never blocks the chain until the poison-pill timeout.
 */
export async function enterOrdered(
  spec: OrderedSpec,
  key: string,
  holds: Holds,
  scope: CoordinationScope,
): Promise<Exclude<Admission, { kind: 'admitted' }> | undefined> {
  const c = scope.coordinator;
  const given = scope.orderedTicket;
  const kept = given !== undefined && given.key === key ? given : undefined;
  const ticket = kept ?? (await c.orderedTicket(key));
  if (kept === undefined) scope.onOrderedTicket?.(ticket);
  const complete = (failed: boolean): Promise<unknown> => c.orderedComplete({ ...ticket, failed, strict: spec.strict });
  let outcome: Awaited<ReturnType<typeof waitUntil<OrderedEnterResult>>>;
  try {
    outcome = await waitUntil(scope, { kind: 'ordered', key, waitMs: spec.waitMs }, async () => {
      const r = await c.orderedEnter({ ...ticket, poisonMs: spec.poisonMs, strict: spec.strict, holder: scope.holder });
      // A waiter tries again by the time the head would be passed over (a dead holder's poison pill), not a poll later.
      if (r.outcome === 'wait')
        return r.poisonedInMs === undefined ? { done: false } : { done: false, retryAfterMs: r.poisonedInMs };
      return { done: true, value: r };
    });
  } catch (error) {
    await complete(false).catch(() => undefined); // hand the position back (best effort; the poison pill covers the rest)
    throw error;
  }
  if (!('value' in outcome)) {
    // A position taken in-process is handed back; one taken when a background run was accepted is kept (the execution parks).
    if (scope.handBackOnTimeout ?? kept === undefined) await complete(false);
    throw contention(scope, 'ordered_lock', key, outcome.waitedMs);
  }
  const r = outcome.value;
  if (r.outcome === 'chain_failed') {
    await complete(false);
    scope.emit({ type: 'coordination.denied', primitive: 'ordered_lock', key, reason: 'ordered_lock_chain_failed' });
    return {
      kind: 'halt',
      reason: 'ordered_lock_chain_failed',
      data: { key, nonce: ticket.nonce, firstFailed: r.firstFailed },
    };
  }
  if (r.outcome === 'stale' || r.outcome === 'passed') {
    scope.emit({ type: 'coordination.denied', primitive: 'ordered_lock', key, reason: 'ordered_lock_stale' });
    throw new OrderedLockStaleError({
      reactor: scope.reactor,
      key,
      nonce: ticket.nonce,
      epoch: ticket.epoch,
      currentEpoch: r.outcome === 'stale' ? r.epoch : undefined,
    });
  }
  scope.emit({ type: 'coordination.acquired', primitive: 'ordered_lock', key, nonce: ticket.nonce });
  holds.push(async (result) => {
    if (result === 'yielded' || result === 'parked') return; // the position is kept for the next job of this execution
    await complete(result === 'failed');
    scope.emit({ type: 'coordination.released', primitive: 'ordered_lock', key });
    scope.onReleased?.('ordered_lock', key);
  });
  holds.keepAlive(spec.poisonMs / 3, async () => void (await c.orderedHeartbeat(ticket)));
  return undefined;
}
