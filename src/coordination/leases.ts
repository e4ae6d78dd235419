/** Lock and semaphore admission: wait as declared, then keep the lease alive until release. */
import type { CoordinationSpec } from '../dsl/coordination.js';
import type { LockAcquireResult, LockGrant } from '../ports/coordinator.js';
import { contention } from './contention.js';
import { monotonicNow } from './deadline.js';
import { keepLease, type Holds, type LeaseStart } from './holds.js';
import type { ResolvedSemaphore } from './limits.js';
import type { CoordinationScope } from './scope.js';
import { waitUntil } from './wait.js';

type LockSpec = Extract<CoordinationSpec, { kind: 'lock' }>;
type SemaphoreSpec = ResolvedSemaphore;
/** A lock taken, and when its lease started on the local monotonic clock (docs/decisions/063). */
type Taken = { readonly token: string; readonly nesting: number; readonly lease: LeaseStart };

/**
 * The lease of a key handed to this owner (docs/decisions/037, 043, 059), counted conservatively.
 * The receiver sent no request of its own: the lease was set by the releaser's (or by a transfer
 * after the release picked this offer). With `leaseLeftMs`, the lease ends that long after the
 * grant arrived; without, the transfer was sent after the offer was made (`offeredAt`). A key
 * handed over in memory runs on the releaser's lease until `confirmed`; the transfer that then
 * gives the receiver its own lease is sent after the grant arrived, so that lease counts from the
 * grant's arrival.
 */
function grantedLease(grant: LockGrant, ttlMs: number, offeredAt: number, scope: CoordinationScope): LeaseStart {
  const arrivedAt = monotonicNow(scope.clock);
  const sentAt = grant.leaseLeftMs === undefined ? offeredAt : arrivedAt + grant.leaseLeftMs - ttlMs;
  return grant.confirmed === undefined ? { sentAt } : { sentAt, confirmed: grant.confirmed, confirmedFrom: arrivedAt };
}

function describeHolder(h: { owner: string; step?: string | undefined } | undefined): string | undefined {
  return h === undefined
    ? undefined
    : h.step === undefined
      ? `execution ${h.owner}`
      : `execution ${h.owner}, step "${h.step}"`;
}

/** Takes an exclusive lock (re-entrant for the same owner), or re-adopts one kept across a park. */
export async function takeLock(
  spec: LockSpec,
  key: string,
  holds: Holds,
  scope: CoordinationScope,
): Promise<undefined> {
  const adopted = scope.adopt === true ? await adoptLock(spec, key, scope) : undefined;
  if (adopted !== undefined) return registerLock(spec, key, adopted.token, holds, scope, adopted.lease);
  let announced = false;
  const request = { key, holder: scope.holder, ttlMs: spec.ttlMs, ...(spec.waitMs > 0 ? { waits: true } : {}) };
  // While it waits, this owner offers to take the key straight from a release in this process (docs/decisions/037).
  const offer = {
    request,
    value: (grant: LockGrant, offeredAt: number): Taken => ({
      token: grant.token,
      nesting: grant.nesting,
      lease: grantedLease(grant, spec.ttlMs, offeredAt, scope),
    }),
  };
  const outcome = await waitUntil(scope, { kind: 'lock', key, waitMs: spec.waitMs, offer }, async () => {
    const sentAt = monotonicNow(scope.clock); // before the request leaves: the lease starts no earlier
    const r: LockAcquireResult = await scope.coordinator.lockAcquire(request);
    if (r.acquired) return { done: true, value: { token: r.token, nesting: r.nesting, lease: { sentAt } } };
    const holder = describeHolder(r.holder);
    if (!announced)
      scope.emit({ type: 'coordination.waiting', primitive: 'lock', key, ...(holder === undefined ? {} : { holder }) });
    announced = true;
    return { done: false, retryAfterMs: r.ttlMs, ...(holder === undefined ? {} : { holder }) };
  });
  if (!('value' in outcome)) throw contention(scope, 'lock', key, outcome.waitedMs, outcome.holder);
  const { token, nesting, lease } = outcome.value;
  scope.emit({ type: 'coordination.acquired', primitive: 'lock', key, token, nesting });
  // A key handed over in memory (docs/decisions/043) is held on the releaser's lease until the backend confirms it.
  return registerLock(spec, key, token, holds, scope, lease);
}

/** The lock's token (and the extension's lease) when this owner still holds it (kept across a park) and it could be extended. */
async function adoptLock(
  spec: LockSpec,
  key: string,
  scope: CoordinationScope,
): Promise<{ readonly token: string; readonly lease: LeaseStart } | undefined> {
  const state = await scope.coordinator.lockState(key);
  if (state?.holder.owner !== scope.holder.owner) return undefined; // lapsed (or taken by another): compete again
  const sentAt = monotonicNow(scope.clock);
  if (!(await scope.coordinator.lockExtend(key, scope.holder.owner, spec.ttlMs))) return undefined;
  scope.emit({ type: 'coordination.extended', primitive: 'lock', key });
  return { token: state.token, lease: { sentAt } };
}

/** Registers a held lock: registry, fencing token, release at the end (kept on `parked`), keep-alive. */
function registerLock(
  spec: LockSpec,
  key: string,
  token: string,
  holds: Holds,
  scope: CoordinationScope,
  lease: LeaseStart,
): undefined {
  const registry = `lock:${key}`;
  const outer = !scope.heldKeys.has(registry);
  scope.heldKeys.add(registry);
  if (outer) scope.fencingTokens.set(key, token);
  holds.push(async (outcome) => {
    if (outer) {
      scope.heldKeys.delete(registry);
      scope.fencingTokens.delete(key);
    }
    if (outcome === 'parked') return; // kept for the execution's next job (it expires by TTL if that never comes)
    const r = await scope.coordinator.lockRelease(key, scope.holder.owner);
    scope.emit({
      type: 'coordination.released',
      primitive: 'lock',
      key,
      nesting: r.nesting,
      ...(r.handedOver === true ? { handedOver: true } : {}),
    });
    // Freed, handed over or granted: the oldest parked execution is woken to wait in its worker, not passed over (docs/decisions/120).
    if (r.nesting === 0) scope.onReleased?.('lock', key);
  });
  keepLease(holds, scope, 'lock', key, spec.ttlMs, lease);
  return undefined;
}

/** Takes a semaphore slot (a lease; re-entrant for the same owner). */
export async function takeSemaphore(
  spec: SemaphoreSpec,
  key: string,
  holds: Holds,
  scope: CoordinationScope,
): Promise<undefined> {
  const adopted = scope.adopt === true ? await adoptSemaphore(spec, key, scope) : undefined;
  if (adopted !== undefined) return registerSemaphore(spec, key, holds, scope, adopted);
  let announced = false;
  const outcome = await waitUntil(scope, { kind: 'semaphore', key, waitMs: spec.waitMs }, async () => {
    const sentAt = monotonicNow(scope.clock); // before the request leaves: the lease starts no earlier
    const r = await scope.coordinator.semaphoreAcquire({
      key,
      holder: scope.holder,
      limit: spec.limit,
      ttlMs: spec.ttlMs,
    });
    if (r.acquired) return { done: true, value: { nesting: r.nesting, lease: { sentAt } } };
    if (!announced) scope.emit({ type: 'coordination.waiting', primitive: 'semaphore', key });
    announced = true;
    return { done: false, retryAfterMs: r.retryAfterMs, holder: `${r.holders}/${r.limit} slots taken` };
  });
  if (!('value' in outcome)) throw contention(scope, 'semaphore', key, outcome.waitedMs, outcome.holder);
  scope.emit({
    type: 'coordination.acquired',
    primitive: 'semaphore',
    key,
    nesting: outcome.value.nesting,
    limit: spec.limit,
  });
  return registerSemaphore(spec, key, holds, scope, outcome.value.lease);
}

/** The extension's lease when this owner still holds a slot (kept across a park) and it could be extended. */
async function adoptSemaphore(
  spec: SemaphoreSpec,
  key: string,
  scope: CoordinationScope,
): Promise<LeaseStart | undefined> {
  const state = await scope.coordinator.semaphoreState(key, spec.limit);
  if (!state.holders.some((h) => h.holder.owner === scope.holder.owner)) return undefined;
  const sentAt = monotonicNow(scope.clock);
  if (!(await scope.coordinator.semaphoreExtend(key, scope.holder.owner, spec.ttlMs))) return undefined;
  scope.emit({ type: 'coordination.extended', primitive: 'semaphore', key });
  return { sentAt };
}

/** Registers a held slot: registry (limit 1), release at the end (kept on `parked`), keep-alive. */
function registerSemaphore(
  spec: SemaphoreSpec,
  key: string,
  holds: Holds,
  scope: CoordinationScope,
  lease: LeaseStart,
): undefined {
  const registry = `semaphore:${key}`;
  const tracked = spec.limit === 1 && !scope.heldKeys.has(registry);
  if (tracked) scope.heldKeys.add(registry);
  holds.push(async (outcome) => {
    if (tracked) scope.heldKeys.delete(registry);
    if (outcome === 'parked') return; // kept for the execution's next job (it expires by TTL if that never comes)
    const r = await scope.coordinator.semaphoreRelease(key, scope.holder.owner);
    scope.emit({ type: 'coordination.released', primitive: 'semaphore', key, nesting: r.nesting });
    if (r.nesting === 0) scope.onReleased?.('semaphore', key);
  });
  keepLease(holds, scope, 'semaphore', key, spec.ttlMs, lease);
  return undefined;
}
