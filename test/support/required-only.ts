import type { Coordinator } from '../../src/ports/coordinator.js';

/**
 * `coordinator` reduced to the transitions every backend must implement: no fast paths
 * (`fastPaths` absent), no `periodNote`. Each method is bound to the wrapped coordinator, so its
 * state is shared with it: a test can act on the original as "another process" would.
 */
export function requiredOnly(coordinator: Coordinator): Coordinator {
  const c = coordinator;
  return {
    ...(c.processLocal === undefined ? {} : { processLocal: c.processLocal }),
    time: () => c.time(),
    lockAcquire: (request) => c.lockAcquire(request),
    lockRelease: (key, owner) => c.lockRelease(key, owner),
    lockExtend: (key, owner, ttlMs) => c.lockExtend(key, owner, ttlMs),
    lockState: (key) => c.lockState(key),
    semaphoreAcquire: (request) => c.semaphoreAcquire(request),
    semaphoreRelease: (key, owner) => c.semaphoreRelease(key, owner),
    semaphoreExtend: (key, owner, ttlMs) => c.semaphoreExtend(key, owner, ttlMs),
    semaphoreState: (key, limit) => c.semaphoreState(key, limit),
    rateTake: (request) => c.rateTake(request),
    rateState: (key, periodMs) => c.rateState(key, periodMs),
    rateRefund: (request) => c.rateRefund(request),
    periodIsMarked: (key, bucket) => c.periodIsMarked(key, bucket),
    periodMark: (request) => c.periodMark(request),
    periodState: (key, bucket) => c.periodState(key, bucket),
    orderedTicket: (key) => c.orderedTicket(key),
    orderedEnter: (request) => c.orderedEnter(request),
    orderedHeartbeat: (ticket) => c.orderedHeartbeat(ticket),
    orderedComplete: (request) => c.orderedComplete(request),
    orderedState: (key) => c.orderedState(key),
    orderedSkip: (key) => c.orderedSkip(key),
    orderedReset: (key) => c.orderedReset(key),
    close: () => c.close(),
  };
}
