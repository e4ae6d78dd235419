/**
 * Matcher logic over live coordination state (any {@link Coordinator}: memory or Redis). All
 * asynchronous: `await expect(coordinator).toBeLockedBy('account:1', executionId)`.
 *
 * @module
 */
import type { Coordinator, OrderedState } from '../ports/coordinator.js';
import type { Verdict } from './matchers.js';

function isCoordinator(value: unknown): value is Coordinator {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Coordinator).lockState === 'function' &&
    typeof (value as Coordinator).orderedState === 'function'
  );
}

async function guard(received: unknown, check: (c: Coordinator) => Promise<Verdict>): Promise<Verdict> {
  return isCoordinator(received)
    ? check(received)
    : { pass: false, message: 'expected a ts-reactor Coordinator (e.g. testEngine.coordinator)' };
}

/**
 * Whether a hold's owner is `expected`: the same id, or a worker job's hold of that root execution
 * (a worker holds as `<root execution id>@<job>`, so two jobs of one execution never share a hold).
 */
function ownedBy(actual: string, expected: string): boolean {
  return actual === expected || (actual.startsWith(`${expected}@`) && !expected.includes('@'));
}

/** An owner as a reader knows it: a worker job's hold names its root execution and the job. */
function describeOwner(owner: string): string {
  const at = owner.lastIndexOf('@');
  return at <= 0 ? owner : `${owner.slice(0, at)} (worker job ${owner.slice(at + 1)})`;
}

/** The expected semaphore occupancy. */
export interface SemaphoreExpectation {
  readonly limit: number;
  readonly held?: number;
  readonly available?: number;
}

/** The expected ordered-lock cursor (any subset). */
export interface OrderedExpectation {
  /** The next position to be handed out. */
  readonly next?: number;
  readonly lastCompleted?: number;
  readonly inFlight?: number | undefined;
  readonly firstFailed?: number | undefined;
  readonly drained?: boolean;
}

/** The coordination matchers by name. */
export const coordinationMatchers = {
  toBeLockedBy: (received: unknown, key: string, owner?: string, step?: string): Promise<Verdict> =>
    guard(received, async (c) => {
      const state = await c.lockState(key);
      const pass =
        state !== undefined &&
        (owner === undefined || ownedBy(state.holder.owner, owner)) &&
        (step === undefined || state.holder.step === step);
      const who =
        state === undefined
          ? 'free'
          : `held by ${describeOwner(state.holder.owner)}${state.holder.step === undefined ? ' (reactor level)' : ` (step "${state.holder.step}")`}`;
      return {
        pass,
        message: `expected lock "${key}" to be held${owner === undefined ? '' : ` by ${owner}`}${step === undefined ? '' : ` for step "${step}"`}; it is ${who}`,
      };
    }),
  toHaveHoldAttributedTo: (received: unknown, key: string, step: string): Promise<Verdict> =>
    guard(received, async (c) => {
      const lock = await c.lockState(key);
      const slots = lock === undefined ? (await c.semaphoreState(key)).holders : [];
      const holders = lock === undefined ? slots.map((s) => s.holder) : [lock.holder];
      const pass = holders.some((h) => h.step === step);
      const who =
        holders.length === 0
          ? 'nobody holds it'
          : `held for ${holders.map((h) => (h.step === undefined ? 'the reactor level' : `step "${h.step}"`)).join(', ')}`;
      return { pass, message: `expected a hold on "${key}" (lock or semaphore) attributed to step "${step}"; ${who}` };
    }),
  toHaveSemaphoreSlots: (received: unknown, key: string, expected: SemaphoreExpectation): Promise<Verdict> =>
    guard(received, async (c) => {
      const state = await c.semaphoreState(key, expected.limit);
      const held = state.holders.length;
      const available = Math.max(0, expected.limit - held);
      const pass =
        (expected.held === undefined || expected.held === held) &&
        (expected.available === undefined || expected.available === available);
      return {
        pass,
        message: `expected semaphore "${key}" (limit ${expected.limit}) to have ${JSON.stringify({ held: expected.held, available: expected.available })}; it has ${held} held, ${available} available`,
      };
    }),
  toHaveRateCount: (received: unknown, key: string, periodMs: number, count: number): Promise<Verdict> =>
    guard(received, async (c) => {
      const state = await c.rateState(key, periodMs);
      return {
        pass: state.count === count,
        message: `expected rate limit "${key}" to count ${count} start(s) in its ${periodMs} ms window; it counts ${state.count}`,
      };
    }),
  toHavePeriodMarked: (received: unknown, key: string, bucket: string): Promise<Verdict> =>
    guard(received, async (c) => ({
      pass: await c.periodIsMarked(key, bucket),
      message: `expected period "${key}" to be marked for bucket ${bucket}`,
    })),
  toHaveOrderedState: (received: unknown, key: string, expected: OrderedExpectation): Promise<Verdict> =>
    guard(received, async (c) => {
      const state = await c.orderedState(key);
      const actual = view(state);
      const pass = Object.entries(expected).every(([k, v]) => actual[k as keyof typeof actual] === v);
      return {
        pass,
        message: `expected ordered lock "${key}" to match ${JSON.stringify(expected)}; it is ${JSON.stringify(actual)}`,
      };
    }),
};

function view(state: OrderedState): Required<OrderedExpectation> {
  return {
    next: state.issued + 1,
    lastCompleted: state.lastCompleted,
    inFlight: state.inFlight,
    firstFailed: state.firstFailed,
    drained: state.drained,
  };
}
