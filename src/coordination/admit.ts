/**
 * Admission: takes a set of declarations in the one fixed order, waiting as declared, and
 * returns the holds to release in reverse — or why it could not.
 *
 * Order: ordered gate → period fast check → lock → semaphore → rate limit → period re-check.
 * The ordered gate comes first so a waiter holds nothing; the rate limit comes after lock and
 * semaphore so a run that loses contention never spends a slot (docs/decisions/004).
 *
 * @module
 */
import type { CoordinationSpec } from '../dsl/coordination.js';
import { ContentionError, RateLimitedError, UnknownRateLimitError } from '../errors.js';
import type { Admission } from './admission.js';
import { Holds, type WorkOutcome } from './holds.js';
import { takeLock, takeSemaphore } from './leases.js';
import { enterOrdered } from './ordered.js';
import { bucketOf } from './period.js';
import { computeKey, type CoordinationScope } from './scope.js';
import { waitUntil } from './wait.js';

export type { Admission } from './admission.js';

const ORDER: readonly CoordinationSpec['kind'][] = ['ordered_lock', 'period', 'lock', 'semaphore', 'rate_limit'];

/** Takes every declaration in `specs` for `args`. Key functions run before anything is taken. */
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
  let keyed: { spec: CoordinationSpec; key: string }[];
  try {
    keyed = ORDER.flatMap((kind) => specs.filter((s) => s.kind === kind)).map((spec) => ({
      spec,
      key: computeKey(spec, args, scope),
    }));
    for (const { spec } of keyed)
      if (spec.kind === 'rate_limit' && spec.name !== undefined && !scope.rateLimits.has(spec.name))
        throw new UnknownRateLimitError(scope.reactor, spec.name, [...scope.rateLimits.keys()]);
  } catch (error) {
    return { kind: 'refused', error: error as Error };
  }
  try {
    for (const { spec, key } of keyed) {
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

async function take(spec: CoordinationSpec, key: string, holds: Holds, scope: CoordinationScope): Promise<Stop> {
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
      return takeRate(spec, key, scope);
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

async function takeRate(
  spec: Extract<CoordinationSpec, { kind: 'rate_limit' }>,
  key: string,
  scope: CoordinationScope,
): Promise<Stop> {
  const windows = (spec.name === undefined ? spec.windows : scope.rateLimits.get(spec.name)!).map((w) => ({
    key,
    limit: w.limit,
    periodMs: w.periodMs,
  }));
  let refusal: { window: { limit: number; periodMs: number }; count: number; retryAfterMs: number } | undefined;
  const outcome = await waitUntil(scope, { kind: 'rate', key, waitMs: spec.waitMs }, async () => {
    const r = await scope.coordinator.rateTake({ windows, id: scope.startId });
    if (r.allowed) return { done: true, value: true };
    refusal = r;
    return { done: false, retryAfterMs: r.retryAfterMs };
  });
  if ('value' in outcome) {
    scope.emit({ type: 'coordination.acquired', primitive: 'rate_limit', key });
    return undefined;
  }
  const r = refusal!;
  scope.emit({
    type: 'coordination.denied',
    primitive: 'rate_limit',
    key,
    reason: 'rate_limited',
    retryAfterMs: r.retryAfterMs,
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
