/** Lock and semaphore admission: wait as declared, then keep the lease alive until release. */
import type { CoordinationSpec } from '../dsl/coordination.js';
import { contention } from './contention.js';
import { keepLease, type Holds } from './holds.js';
import type { CoordinationScope } from './scope.js';
import { waitUntil } from './wait.js';

type LockSpec = Extract<CoordinationSpec, { kind: 'lock' }>;
type SemaphoreSpec = Extract<CoordinationSpec, { kind: 'semaphore' }>;

function describeHolder(h: { owner: string; step?: string | undefined } | undefined): string | undefined {
  return h === undefined ? undefined : h.step === undefined ? `execution ${h.owner}` : `execution ${h.owner}, step "${h.step}"`;
}

/** Takes an exclusive lock (re-entrant for the same owner). */
export async function takeLock(spec: LockSpec, key: string, holds: Holds, scope: CoordinationScope): Promise<undefined> {
  let announced = false;
  const outcome = await waitUntil(scope, { kind: 'lock', key, waitMs: spec.waitMs }, async () => {
    const r = await scope.coordinator.lockAcquire({ key, holder: scope.holder, ttlMs: spec.ttlMs });
    if (r.acquired) return { done: true, value: r };
    const holder = describeHolder(r.holder);
    if (!announced) scope.emit({ type: 'coordination.waiting', primitive: 'lock', key, ...(holder === undefined ? {} : { holder }) });
    announced = true;
    return { done: false, retryAfterMs: r.ttlMs, ...(holder === undefined ? {} : { holder }) };
  });
  if (!('value' in outcome)) throw contention(scope, 'lock', key, outcome.waitedMs, outcome.holder);
  const { token, nesting } = outcome.value;
  scope.emit({ type: 'coordination.acquired', primitive: 'lock', key, token, nesting });
  const registry = `lock:${key}`;
  const outer = !scope.heldKeys.has(registry);
  scope.heldKeys.add(registry);
  if (outer) scope.fencingTokens.set(key, token);
  holds.push(async () => {
    if (outer) {
      scope.heldKeys.delete(registry);
      scope.fencingTokens.delete(key);
    }
    const r = await scope.coordinator.lockRelease(key, scope.holder.owner);
    scope.emit({ type: 'coordination.released', primitive: 'lock', key, nesting: r.nesting });
    if (r.nesting === 0) scope.onReleased?.('lock', key);
  });
  keepLease(holds, scope, 'lock', key, spec.ttlMs);
  return undefined;
}

/** Takes a semaphore slot (a lease; re-entrant for the same owner). */
export async function takeSemaphore(spec: SemaphoreSpec, key: string, holds: Holds, scope: CoordinationScope): Promise<undefined> {
  let announced = false;
  const outcome = await waitUntil(scope, { kind: 'semaphore', key, waitMs: spec.waitMs }, async () => {
    const r = await scope.coordinator.semaphoreAcquire({ key, holder: scope.holder, limit: spec.limit, ttlMs: spec.ttlMs });
    if (r.acquired) return { done: true, value: r };
    if (!announced) scope.emit({ type: 'coordination.waiting', primitive: 'semaphore', key });
    announced = true;
    return { done: false, retryAfterMs: r.retryAfterMs, holder: `${r.holders}/${r.limit} slots taken` };
  });
  if (!('value' in outcome)) throw contention(scope, 'semaphore', key, outcome.waitedMs, outcome.holder);
  scope.emit({ type: 'coordination.acquired', primitive: 'semaphore', key, nesting: outcome.value.nesting });
  const registry = `semaphore:${key}`;
  const tracked = spec.limit === 1 && !scope.heldKeys.has(registry);
  if (tracked) scope.heldKeys.add(registry);
  holds.push(async () => {
    if (tracked) scope.heldKeys.delete(registry);
    const r = await scope.coordinator.semaphoreRelease(key, scope.holder.owner);
    scope.emit({ type: 'coordination.released', primitive: 'semaphore', key, nesting: r.nesting });
    if (r.nesting === 0) scope.onReleased?.('semaphore', key);
  });
  keepLease(holds, scope, 'semaphore', key, spec.ttlMs);
  return undefined;
}
