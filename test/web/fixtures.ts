/**
 * Reactors and an embedded engine for the dashboard tests: a payment with a secret input field
 * that fails on demand (with a cause), and a locked transfer whose step waits for the test.
 */
import { z } from 'zod';
import { createEmbeddedEngine, MemoryCoordinator, reactor, type EmbeddedEngine } from '../../src/index.js';

/** A gate the test opens. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

export interface Fixture {
  readonly engine: EmbeddedEngine;
  readonly coordinator: MemoryCoordinator;
  readonly undone: string[];
  /** Opens the holding transfer's step. */
  readonly release: () => void;
  readonly payment: ReturnType<typeof paymentReactor>;
  readonly transfer: ReturnType<typeof transferReactor>;
}

function paymentReactor(undone: string[]) {
  return reactor('payment')
    .input({ user: z.string(), password: z.string(), fail: z.boolean().default(false) }, { redact: ['password'] })
    .step('reserve', {
      args: ($) => ({ user: $.input('user') }),
      run: ({ user }) => `res-${user}`,
      undo: (v) => void undone.push(`reserve:${v}`),
    })
    .step('charge', {
      args: ($) => ({ reservation: $.result('reserve'), fail: $.input('fail') }),
      run: ({ reservation, fail }) =>
        fail ? Promise.reject(new Error('card declined', { cause: new Error('issuer timeout') })) : `ch-${reservation}`,
      undo: (v) => void undone.push(`charge:${v}`),
    })
    .step('notify', { waitFor: ['charge'], run: () => 'sent' })
    .returns('charge');
}

function transferReactor(held: Promise<void>) {
  return reactor('transfer')
    .input({ account: z.string() })
    .withLock({ key: ({ account }) => `account:${account}` })
    .step('post', { run: async () => (await held, 'posted') })
    .build();
}

/** An embedded engine whose workers park at once on contention (fallback far away). */
export function fixture(): Fixture {
  const coordinator = new MemoryCoordinator();
  const engine = createEmbeddedEngine({ coordinator, background: { workerWaitMs: 0, parkFallbackMs: 60_000 } });
  const undone: string[] = [];
  const held = gate();
  return {
    engine,
    coordinator,
    undone,
    release: held.open,
    payment: paymentReactor(undone),
    transfer: transferReactor(held.promise),
  };
}

/** Polls until `probe` is truthy (real time, small steps). */
export async function until<T>(probe: () => Promise<T> | T, what: string, timeoutMs = 5_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
