/** What `sleep.test.ts` and its worker processes (`sleep-worker-process.ts`) share. */
import { reactor } from '../../src/index.js';

export interface SleepWorkerConfig {
  readonly url: string;
  /** Key prefix of the runtime (store, queue) and of the observation keys. */
  readonly prefix: string;
  readonly concurrency: number;
}

/** How long each `napper` sleeps. */
export const NAP_MS = 2_000;

/**
 * How long each `longNapper` sleeps: the kill test's sleepers, long enough that all 200 are
 * parked, and the victim killed, well before the first wake job is delivered (a worker that
 * dies holding a woken sleeper's job is recovered only by stall detection, 30 s by default).
 */
export const LONG_NAP_MS = 12_000;

/** Observation keys the workers write: executions of `busy` completed, and the pids that ran them. */
export function sleepKeys(prefix: string): { busyDone: string; busyPids: string; afterPids: string } {
  return {
    busyDone: `${prefix}-obs:busy-done`,
    busyPids: `${prefix}-obs:busy-pids`,
    afterPids: `${prefix}-obs:after-pids`,
  };
}

/** The hooks the worker processes run (the test process runs none). */
export interface SleepHooks {
  readonly after: () => Promise<void>;
  readonly busy: () => Promise<void>;
}

/**
 * `napper`: a step, a 2 s sleep, a step. `longNapper`: the same with a 12 s sleep. `busy`: one
 * short step (other work the workers do meanwhile).
 */
export function buildSleepReactors(hooks: SleepHooks) {
  const napper = reactor('mp-napper')
    .step('before', { run: () => 'ready' })
    .sleep('nap', { for: NAP_MS, waitFor: ['before'] })
    .step('after', { waitFor: ['nap'], run: () => hooks.after() })
    .build();
  const longNapper = reactor('mp-long-napper')
    .step('before', { run: () => 'ready' })
    .sleep('nap', { for: LONG_NAP_MS, waitFor: ['before'] })
    .step('after', { waitFor: ['nap'], run: () => hooks.after() })
    .build();
  const busy = reactor('mp-busy')
    .step('work', { run: () => hooks.busy() })
    .build();
  return { napper, longNapper, busy };
}
