/**
 * What `steps.test.ts` and its worker processes (`step-worker-process.ts`) share: the config,
 * the reactors (same names and key functions on both sides) and the guard keys. Step-level
 * coordination: only `charge` is locked per account; `audit` and `notify` are not.
 *
 * Each step body is a guarded section (see `bg-protocol.ts`: INCR a per-key counter, record the
 * per-key maximum), one guard per step name, so the test can read "never two inside `charge`
 * for one account" next to "`audit` and `notify` of one account overlapped".
 */
import { z } from 'zod';
import { reactor } from '../../src/index.js';
import { bgGuardKeys } from './bg-protocol.js';

export interface StepWorkerConfig {
  readonly url: string;
  readonly prefix: string;
  readonly guard: string;
  readonly concurrency: number;
  readonly stall?: { readonly lockDurationMs?: number; readonly stalledIntervalMs?: number };
  readonly background?: {
    readonly contentionCap?: number;
    readonly parkFallbackMs?: number;
    readonly livenessTtlMs?: number;
    readonly workerWaitMs?: number;
  };
  /** Start the worker only on a `go` line on stdin. */
  readonly waitForGo?: boolean;
  /** This process hangs forever inside `st-hang`'s locked step (the SC-008 victim). */
  readonly hang?: boolean;
}

/** The guard keys of one step of one scenario. */
export const stepGuard = (
  guard: string,
  step: 'audit' | 'charge' | 'notify' | 'hang',
): ReturnType<typeof bgGuardKeys> => bgGuardKeys(`${guard}:${step}`);

/** A guarded section run by a step body. */
export type Section = (step: 'audit' | 'charge' | 'notify' | 'hang', key: string, executionId: string) => Promise<void>;

/** TTL of the hanging step's lock (SC-008). */
export const HANG_TTL_MS = 2_000;

/** The reactors every process registers. */
export function buildStepReactors(section: Section) {
  // SC-001 / SC-002: audit → charge (locked per account) → notify.
  const payment = reactor('st-payment')
    .input({ account: z.string() })
    .step('audit', { run: ({ account }, ctx) => section('audit', `acct:${account}`, ctx.executionId) })
    .step('charge', {
      waitFor: ['audit'],
      lock: { key: ({ account }) => `st:acct:${account}`, ttl: '10s' },
      run: ({ account }, ctx) => section('charge', `acct:${account}`, ctx.executionId),
    })
    .step('notify', {
      waitFor: ['charge'],
      run: ({ account }, ctx) => section('notify', `acct:${account}`, ctx.executionId),
    })
    .build();
  // SC-008: the locked step hangs in the victim process.
  const hang = reactor('st-hang')
    .input({ account: z.string() })
    .step('prepare', { run: () => 'ready' })
    .step('charge', {
      waitFor: ['prepare'],
      lock: { key: ({ account }) => `st:hang:${account}`, ttl: HANG_TTL_MS },
      run: ({ account }, ctx) => section('hang', `hang:${account}`, ctx.executionId),
    })
    .build();
  return { payment, hang };
}
