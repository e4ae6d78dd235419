/**
 * What `cluster-failover.test.ts` and its worker processes (`cluster-failover-worker-process.ts`)
 * share: the config, the reactors (same names on both sides) and the lines the workers print.
 *
 * A worker prints JSON lines: `{ready, pid, readyz}` once its operations server listens;
 * `{done}` every {@link PROGRESS_EVERY} locked sections; `{probing: key}` once its probe waits on
 * `key`'s lock channel with the subscription confirmed, `{probed: key}` when a release woke it;
 * `{held: executionId}` when a `held` step started, `{aborted: executionId, reason}` when its
 * signal aborted; and on SIGTERM `{stopped, spans, taken, waits}` (`taken`: when the
 * process first took each execution's job).
 */
import { z } from 'zod';
import { reactor } from '../../src/index.js';

export interface FailoverWorkerConfig {
  readonly nodes: readonly { readonly host: string; readonly port: number }[];
  readonly prefix: string;
  readonly concurrency: number;
}

/** One locked section as a worker saw it: its key and execution, when it was entered and left (ms since the epoch, sub-ms). */
export interface Span {
  readonly key: string;
  readonly executionId: string;
  readonly enter: number;
  readonly exit: number;
}

/**
 * How the waits of a worker's steps for a busy lock ended, by when they ended: `won` (the step
 * took the lock while waiting in the process: a wake-up, a grant or a hand-over) or `parked`
 * (the wait gave up and the execution parked).
 */
export interface WaitOutcome {
  readonly at: number;
  readonly outcome: 'won' | 'parked';
}

/** A worker prints `{done}` every this many locked sections. */
export const PROGRESS_EVERY = 50;

/** The wall clock with sub-millisecond precision, comparable between processes of one machine. */
export const wallNow = (): number => performance.timeOrigin + performance.now();

/** The reactors every process registers. */
export function failoverReactors(
  section: (key: string, executionId: string) => Promise<void>,
  held: (executionId: string, signal: AbortSignal) => Promise<void>,
) {
  // The acceptance workload: 1,000 executions over 50 keys, a step lock each.
  const locked = reactor('clfo-locked')
    .input({ key: z.string() })
    .step('prepare', { run: () => 'ready' })
    .step('work', {
      waitFor: ['prepare'],
      lock: { key: ({ key }) => `clfo:${key}`, ttl: '10s' },
      run: ({ key }, ctx) => section(key, ctx.executionId),
    })
    .step('after', { waitFor: ['work'], run: () => 'done' })
    .build();
  // A step that runs until its signal aborts: the target of a cancel announcement.
  const holding = reactor('clfo-held')
    .step('hold', { run: (_, ctx) => held(ctx.executionId, ctx.signal) })
    .build();
  return { locked, holding };
}
