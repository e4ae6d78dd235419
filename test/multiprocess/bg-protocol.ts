/**
 * What `background.test.ts` and its worker processes (`bg-worker-process.ts`) share: the
 * worker's JSON config, the lines it prints, the reactors both sides register (same names, same
 * key functions), and the guard keys in Redis.
 *
 * The guard: each entry into a step's critical section runs {@link GUARD_ENTER} (INCR of the
 * key's counter, the per-key maximum seen, a total, and a per-execution entry count); the exit
 * DECRs the counter. A maximum above 1 for a key means two executions were inside at once.
 */
import { z } from 'zod';
import { reactor } from '../../src/index.js';

export interface BgWorkerConfig {
  readonly url: string;
  /** Key prefix of the runtime (store, coordinator, wait lists, BullMQ); one per scenario. */
  readonly prefix: string;
  /** Base name of the guard keys. */
  readonly guard: string;
  readonly concurrency: number;
  readonly stall?: { readonly lockDurationMs?: number; readonly stalledIntervalMs?: number };
  readonly background?: {
    readonly contentionCap?: number;
    readonly parkFallbackMs?: number;
    readonly livenessTtlMs?: number;
  };
  /** Start the worker only on a `go` line on stdin (so a backlog can be queued first). */
  readonly waitForGo?: boolean;
  /** This process hangs forever inside the step of `bg-hang` (the R2 victim) and of `bg-unrecorded`. */
  readonly hang?: boolean;
}

/** Printed once the runtime is up and the worker started. */
export interface ReadyLine {
  readonly ready: true;
  readonly pid: number;
}

/** Printed by a step as it enters its section (`bg-hang`, `bg-slow`, `bg-unrecorded`). */
export interface InStepLine {
  readonly inStep: string;
  readonly pid: number;
  readonly executionId: string;
  readonly inside: number;
}

/** Printed by `bg-slow` as it leaves its section. */
export interface StepDoneLine {
  readonly stepDone: string;
  readonly pid: number;
  readonly executionId: string;
}

/** What a worker counted (printed on `stats` and once more after a graceful shutdown). */
export interface WorkerStats {
  readonly pid: number;
  /** `run.parked` events emitted here. */
  readonly parks: number;
  /** `run.resumed` events (job deliveries that took the execution). */
  readonly resumed: number;
  readonly completed: number;
  readonly failed: number;
  /** Critical sections entered here. */
  readonly sections: number;
}

export interface StatsLine extends WorkerStats {
  readonly stats: true;
}

export interface StoppedLine extends WorkerStats {
  readonly stopped: true;
  readonly closeMs: number;
}

/** The guard keys of one scenario. */
export function bgGuardKeys(guard: string): {
  cur: (key: string) => string;
  max: string;
  total: string;
  runs: string;
  all: string;
  allMax: string;
} {
  return {
    cur: (key) => `${guard}:cur:${key}`,
    max: `${guard}:max`,
    total: `${guard}:total`,
    runs: `${guard}:runs`,
    all: `${guard}:all`,
    allMax: `${guard}:all-max`,
  };
}

// KEYS: cur, max (hash), total, runs (hash), all, all-max. ARGV: lock key, execution id.
// Returns the key's counter after INCR. `all` / `all-max`: sections inside across every key.
export const GUARD_ENTER = `
local v = redis.call('INCR', KEYS[1])
local m = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
if v > m then redis.call('HSET', KEYS[2], ARGV[1], v) end
redis.call('INCR', KEYS[3])
redis.call('HINCRBY', KEYS[4], ARGV[2], 1)
local a = redis.call('INCR', KEYS[5])
if a > tonumber(redis.call('GET', KEYS[6]) or '0') then redis.call('SET', KEYS[6], a) end
return v
`;

// KEYS: cur, all.
export const GUARD_EXIT = `
redis.call('DECR', KEYS[1])
redis.call('DECR', KEYS[2])
`;

/** A guarded section: `enter` returns the counter value inside; `exit` leaves. */
export interface Section {
  enter(key: string, executionId: string): Promise<number>;
  exit(key: string): Promise<void>;
}

export interface StepHooks {
  readonly section: Section;
  /** Called inside the section (after entering): the place to print, sleep or hang. */
  readonly inside: (name: SectionName, key: string, executionId: string, inside: number) => Promise<void>;
  /** Called by a compensation (`bg-unrecorded`): the place to print it. */
  readonly compensated?: (step: string, executionId: string) => Promise<void>;
}

/** The sections the reactors' steps enter. */
export type SectionName = 'r1' | 'hang' | 'slow' | 'second' | 'unrecorded';

/** Printed by a compensation as it runs (`bg-unrecorded`). */
export interface CompensatedLine {
  readonly compensated: string;
  readonly pid: number;
  readonly executionId: string;
}

export const R1_LOCK_TTL = '10s';
export const HANG_LOCK_TTL_MS = 4_000;

/** The reactors every process registers. */
export function buildReactors(hooks: StepHooks) {
  const guarded = async (
    name: SectionName,
    key: string,
    executionId: string,
  ): Promise<{ key: string; inside: number }> => {
    const inside = await hooks.section.enter(key, executionId);
    try {
      await hooks.inside(name, key, executionId, inside);
    } finally {
      await hooks.section.exit(key);
    }
    return { key, inside };
  };
  // R1: a reactor-level lock per account; the step is the critical section.
  const r1 = reactor('bg-r1')
    .input({ account: z.string() })
    .withLock({ key: ({ account }) => `acct:${account}`, ttl: R1_LOCK_TTL })
    .step('section', { run: ({ account }, ctx) => guarded('r1', `acct:${account}`, ctx.executionId) })
    .returns('section');
  // R2: same shape, short TTL; the step hangs in the victim process.
  const hang = reactor('bg-hang')
    .input({ account: z.string() })
    .withLock({ key: ({ account }) => `hang:${account}`, ttl: HANG_LOCK_TTL_MS })
    .step('section', { run: ({ account }, ctx) => guarded('hang', `hang:${account}`, ctx.executionId) })
    .returns('section');
  // SIGTERM: a ~300 ms step under a lock of its own key (no contention).
  const slow = reactor('bg-slow')
    .input({ n: z.number() })
    .withLock({ key: ({ n }) => `slow:${n}`, ttl: '10s' })
    .step('section', { run: ({ n }, ctx) => guarded('slow', `slow:${n}`, ctx.executionId) })
    .returns('section');
  // Cancel announced from another process: a ~300 ms first step, then a second that must not run.
  const cancellable = reactor('bg-cancel')
    .input({ n: z.number() })
    .step('first', { run: ({ n }, ctx) => guarded('slow', `cancel:${n}`, ctx.executionId), undo: () => undefined })
    .step('second', {
      args: ($) => ({ n: $.input('n'), first: $.result('first') }),
      run: ({ n }, ctx) => guarded('second', `second:${n}`, ctx.executionId),
    })
    .returns('second');
  // A cancel while a dead worker's job is back in the queue: a first step that hangs in the victim
  // process (no lock, the default checkpoint interval: the record still says `pending`), and its compensation.
  const unrecorded = reactor('bg-unrecorded')
    .input({ n: z.number() })
    .step('first', {
      run: ({ n }, ctx) => guarded('unrecorded', `unrecorded:${n}`, ctx.executionId),
      compensate: (_error, _args, ctx) => hooks.compensated?.('first', ctx.executionId),
    })
    .returns('first');
  return { r1, hang, slow, cancellable, unrecorded };
}
