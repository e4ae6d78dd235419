/**
 * Admission: takes a set of declarations in the one fixed order, waiting as declared, and
 * returns the holds to release in reverse — or why it could not.
 *
 * Order: ordered gate → period fast check → lock → semaphore → rate limit → period re-check.
 * The ordered gate comes first so a waiter holds nothing; the rate limit comes after lock and
 * semaphore so a run that loses contention never spends a slot (docs/decisions/004). Several
 * semaphores or rate limits are taken one by one in the string order of their keys; when one
 * refuses, those already taken are given back — slots released, charges refunded
 * (docs/decisions/085).
 *
 * @module
 */
import type { CoordinationSpec } from '../dsl/coordination.js';
import { ContentionError, RateLimitedError } from '../errors.js';
import type { Admission } from './admission.js';
import { Holds, type WorkOutcome } from './holds.js';
import { takeLock, takeSemaphore } from './leases.js';
import { resolveAll, type Keyed, type ResolvedRate, type ResolvedSpec } from './limits.js';
import { enterOrdered } from './ordered.js';
import { bucketOf } from './period.js';
import type { CoordinationScope } from './scope.js';
import { waitUntil } from './wait.js';

export type { Admission } from './admission.js';

/** Takes every declaration in `specs` for `args`. Key and limit functions run before anything is taken. */
export async function admit(
  specs: readonly CoordinationSpec[],
  args: unknown,
  scope: CoordinationScope,
): Promise<Admission> {
  const holds =
    scope.keepOrderedUntilFinal === true && scope.orderedTicket !== undefined
      ? new HoldsKeepingTurn(scope.clock)
      : new Holds(scope.clock);
  if (specs.length === 0) return { kind: 'admitted', holds };
  let keyed: Keyed[];
  try {
    keyed = resolveAll(specs, args, scope);
  } catch (error) {
    return { kind: 'refused', error: error as Error };
  }
  const charged: Keyed[] = [];
  try {
    for (const entry of keyed) {
      const { spec, key } = entry;
      if (spec.kind === 'rate_limit') {
        if (await takeRate(spec, key, scope)) charged.push(entry); // only what this admission charged is refunded
        continue;
      }
      const stop = await take(spec, key, holds, scope);
      if (stop) {
        await holds.release('halted');
        return stop;
      }
    }
    const period = keyed.find((k) => k.spec.kind === 'period');
    if (period?.spec.kind === 'period') {
      const stop = keyed.some((k) => k.spec.kind === 'lock')
        ? await checkPeriod(period.spec, period.key, scope)
        : undefined;
      if (stop) {
        await holds.release('halted');
        return stop;
      }
      markOnSuccess(period.spec, period.key, holds, scope);
    }
    return { kind: 'admitted', holds };
  } catch (error) {
    // Nothing of the work ran: release as 'halted' so no period is marked and an ordered position is handed back without poisoning a strict chain.
    // A caller that parks on contention and keeps its position releases as 'yielded' instead (a step's kept position, an async unit's given one).
    await refund(charged, scope);
    const contended = error instanceof ContentionError || error instanceof RateLimitedError;
    const keep =
      contended &&
      (scope.keepPositionOnRefusal === true ||
        (scope.keepOrderedOnContention === true && scope.orderedTicket !== undefined));
    await holds.release(keep ? 'yielded' : 'halted').catch(() => undefined);
    return { kind: 'refused', error: error as Error };
  }
}

type Stop = Exclude<Admission, { kind: 'admitted' }> | undefined;

/** Holds whose given ordered position survives every release but a final one (`keepOrderedUntilFinal`). */
class HoldsKeepingTurn extends Holds {
  override release(outcome: WorkOutcome): Promise<void> {
    return super.release(outcome === 'halted' ? 'yielded' : outcome);
  }
}

/** Gives back the charges of the rate limits taken before a later one refused (best effort: a charge left counts, never more). */
async function refund(charged: readonly Keyed[], scope: CoordinationScope): Promise<void> {
  for (const { spec, key } of charged) {
    if (spec.kind !== 'rate_limit') continue;
    const windows = spec.windows.map((w) => ({ key, periodMs: w.periodMs }));
    try {
      await scope.coordinator.rateRefund({ windows, id: scope.startId });
      scope.emit({ type: 'coordination.released', primitive: 'rate_limit', key, refunded: true });
    } catch {
      // the charge stays until it leaves its window
    }
  }
}

async function take(spec: ResolvedSpec, key: string, holds: Holds, scope: CoordinationScope): Promise<Stop> {
  switch (spec.kind) {
    case 'ordered_lock':
      return enterOrdered(spec, key, holds, scope);
    case 'period':
      return checkPeriod(spec, key, scope);
    case 'lock':
      return takeLock(spec, key, holds, scope);
    case 'semaphore':
      return takeSemaphore(spec, key, holds, scope);
    case 'rate_limit':
      return void (await takeRate(spec, key, scope));
  }
}

/** Period: a marked bucket halts the work. */
async function checkPeriod(
  spec: Extract<CoordinationSpec, { kind: 'period' }>,
  key: string,
  scope: CoordinationScope,
): Promise<Stop> {
  const bucket = bucketOf(spec.every, await scope.coordinator.time());
  if (await scope.coordinator.periodIsMarked(key, bucket.id)) {
    scope.emit({ type: 'coordination.denied', primitive: 'period', key, reason: 'period', bucket: bucket.id });
    return { kind: 'halt', reason: 'period', data: { key, bucket: bucket.id } };
  }
  return undefined;
}

/**
 * Registered last, so it runs first at release: the marker is written while the lock is still
 * held, and only when the work completed. The bucket is the one current at completion.
 */
function markOnSuccess(
  spec: Extract<CoordinationSpec, { kind: 'period' }>,
  key: string,
  holds: Holds,
  scope: CoordinationScope,
): void {
  holds.push(async (outcome) => {
    if (outcome !== 'completed') return;
    const bucket = bucketOf(spec.every, await scope.coordinator.time());
    await scope.coordinator.periodMark({ key, bucket: bucket.id, ttlMs: bucket.remainingMs + 60_000 });
    scope.emit({ type: 'coordination.acquired', primitive: 'period', key, bucket: bucket.id });
  });
}

/** Charges a rate limit (or throws `RateLimitedError`); true when this call charged it, false when the start was charged already. */
async function takeRate(spec: ResolvedRate, key: string, scope: CoordinationScope): Promise<boolean> {
  const windows = spec.windows.map((w) => ({
    key,
    limit: w.limit,
    periodMs: w.periodMs,
  }));
  let refusal: { window: { limit: number; periodMs: number }; count: number; retryAfterMs: number } | undefined;
  const outcome = await waitUntil(scope, { kind: 'rate', key, waitMs: spec.waitMs }, async () => {
    const r = await scope.coordinator.rateTake({ windows, id: scope.startId });
    if (r.allowed) return { done: true, value: r.charged !== false };
    refusal = r;
    return { done: false, retryAfterMs: r.retryAfterMs };
  });
  if ('value' in outcome) {
    scope.emit({ type: 'coordination.acquired', primitive: 'rate_limit', key, limit: windows[0]!.limit });
    return outcome.value;
  }
  const r = refusal!;
  scope.emit({
    type: 'coordination.denied',
    primitive: 'rate_limit',
    key,
    reason: 'rate_limited',
    retryAfterMs: r.retryAfterMs,
    limit: r.window.limit,
    periodMs: r.window.periodMs,
  });
  throw new RateLimitedError({
    reactor: scope.reactor,
    step: scope.step,
    key,
    limit: r.window.limit,
    periodMs: r.window.periodMs,
    count: r.count,
    retryAfterMs: r.retryAfterMs,
  });
}
