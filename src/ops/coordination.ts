/**
 * The live coordination view: every key with state (through the inspector port), read with the
 * Coordinator's per-key state calls, and the parked executions waiting on each key.
 *
 * @module
 */
import { cancelRequestKey, livenessKey } from '../engine/model/keys.js';
import { SWEEP_LOCK_KEY } from '../engine/jobs/sweep.js';
import type { Coordinator } from '../ports/coordinator.js';
import { isCoordinationInspector, type InspectOptions } from '../ports/inspector.js';
import type { Store, WaitingFor } from '../ports/store.js';
import { ReactorError } from '../errors.js';
import { holderView } from './executions.js';
import { lastContendedStep } from './steps.js';
import type {
  CoordinationView,
  LockView,
  OrderedView,
  PeriodView,
  RateView,
  SemaphoreView,
  WaiterView,
} from './types.js';

/** Options of {@link coordinationView}. */
export interface CoordinationQuery {
  /** Glob over keys (`*`, `?`). Default `*`. */
  readonly pattern?: string;
  /** Keys per primitive at most (default 500). */
  readonly limit?: number;
  /** Called with progress as keys are listed (the CLI prints it). */
  readonly onProgress?: (kind: string, examined: number) => void;
}

type Waiters = ReadonlyMap<string, WaiterView[]>;

const LIVENESS = livenessKey('');
const CANCEL = cancelRequestKey('');

/**
 * Reads every live key's state. @throws ReactorError `inspector_missing` when the coordinator
 * cannot list its keys.
 */
export async function coordinationView(
  store: Store,
  coordinator: Coordinator,
  query: CoordinationQuery = {},
): Promise<CoordinationView> {
  if (!isCoordinationInspector(coordinator))
    throw new ReactorError(
      'inspector_missing',
      'this coordinator cannot list its keys (it does not implement CoordinationInspector)',
    );
  const list = (kind: 'lock' | 'semaphore' | 'rate' | 'period' | 'ordered') => {
    const options: InspectOptions = {
      limit: query.limit ?? 500,
      ...(query.pattern === undefined ? {} : { pattern: query.pattern }),
      ...(query.onProgress ? { onProgress: (n: number) => query.onProgress?.(kind, n) } : {}),
    };
    return coordinator.inspectKeys(kind, options);
  };
  const waiters = await parkedWaiters(store);
  const at = await coordinator.time();
  const locks = await Promise.all((await list('lock')).map((k) => lockView(coordinator, k.key, waiters)));
  const semaphores = await Promise.all(
    (await list('semaphore')).map((k) => semaphoreView(coordinator, k.key, waiters)),
  );
  const rates = await Promise.all(
    (await list('rate')).map((k) => rateView(coordinator, k.key, k.periodMs ?? 1, waiters)),
  );
  const periods = await Promise.all((await list('period')).map((k) => periodView(coordinator, k.key, k.bucket ?? '')));
  const ordered = await Promise.all((await list('ordered')).map((k) => orderedView(coordinator, k.key, waiters)));
  return {
    at,
    locks: locks.filter((l): l is LockView => l !== undefined),
    semaphores: semaphores.filter((s) => s.holders.length > 0),
    rates,
    periods: periods.filter((p): p is PeriodView => p !== undefined),
    ordered,
  };
}

/** The ordered lock at `key` with its waiters. */
export async function orderedView(coordinator: Coordinator, key: string, waiters?: Waiters): Promise<OrderedView> {
  const s = await coordinator.orderedState(key);
  const next = s.lastCompleted < s.issued ? s.lastCompleted + 1 : undefined;
  return {
    key,
    epoch: s.epoch,
    issued: s.issued,
    next,
    lastCompleted: s.lastCompleted,
    inFlight: s.inFlight,
    firstFailed: s.firstFailed,
    drained: s.drained,
    waiting: waiters?.get(`ordered_lock:${key}`) ?? [],
  };
}

async function lockView(coordinator: Coordinator, key: string, waiters: Waiters): Promise<LockView | undefined> {
  const state = await coordinator.lockState(key);
  if (!state) return undefined;
  return {
    key,
    ...holderView(state.holder),
    nesting: state.nesting,
    ttlMs: state.ttlMs,
    token: state.token,
    waiting: waiters.get(`lock:${key}`) ?? [],
    internal: key.startsWith(LIVENESS) || key === SWEEP_LOCK_KEY,
  };
}

async function semaphoreView(coordinator: Coordinator, key: string, waiters: Waiters): Promise<SemaphoreView> {
  const state = await coordinator.semaphoreState(key);
  const holders = state.holders.map((h) => ({ ...holderView(h.holder), nesting: h.nesting, ttlMs: h.ttlMs }));
  return {
    key,
    limit: state.limit,
    free: Math.max(0, state.limit - holders.length),
    holders,
    waiting: waiters.get(`semaphore:${key}`) ?? [],
  };
}

async function rateView(coordinator: Coordinator, key: string, periodMs: number, waiters: Waiters): Promise<RateView> {
  const state = await coordinator.rateState(key, periodMs);
  return {
    key,
    periodMs,
    count: state.count,
    resetInMs: state.resetInMs,
    waiting: waiters.get(`rate_limit:${key}`) ?? [],
  };
}

async function periodView(coordinator: Coordinator, key: string, bucket: string): Promise<PeriodView | undefined> {
  const ttlMs = await coordinator.periodState(key, bucket);
  return ttlMs === undefined ? undefined : { key, bucket, ttlMs, internal: key.startsWith(CANCEL) };
}

/** Parked executions by `<primitive>:<key>` of what they wait for, oldest first. */
async function parkedWaiters(store: Store): Promise<Map<string, WaiterView[]>> {
  const byKey = new Map<string, WaiterView[]>();
  const { records } = await store.list({ status: 'parked', limit: 500 });
  for (const record of [...records].reverse()) {
    const w: WaitingFor | undefined = record.background?.waitingFor;
    if (!w) continue;
    const step = lastContendedStep(record.trace ?? []);
    const view: WaiterView = {
      executionId: record.id,
      reactor: record.reactor,
      attempt: w.attempt,
      since: record.updatedAt,
      ...(step === undefined ? {} : { step }),
      ...(w.dueAt === undefined ? {} : { dueAt: w.dueAt }),
    };
    const id = `${w.primitive}:${w.key}`;
    byKey.set(id, [...(byKey.get(id) ?? []), view]);
  }
  return byKey;
}
