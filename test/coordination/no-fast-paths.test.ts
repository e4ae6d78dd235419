/**
 * A backend that offers none of the Coordinator port's fast paths — only the transitions every
 * backend must implement — still runs contended work to the end: waiters poll on the engine's
 * clock (the fallback of `coordination/fast-paths.ts`). Virtual time: no test here sleeps.
 */
import { describe, expect, test } from 'vitest';
import { fastPathsOf } from '../../src/coordination/fast-paths.js';
import { reactor } from '../../src/index.js';
import type { Coordinator } from '../../src/ports/coordinator.js';
import { MemoryCoordinator } from '../../src/storage/memory/coordinator.js';
import { createTestEngine, ManualClock } from '../../src/testing/index.js';
import { track } from '../contract/coordinator-contract.js';
import { requiredOnly } from '../support/required-only.js';

/** Lets every pending callback, microtask and `setImmediate` run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

const charge = reactor('pay')
  .step('charge', { lock: { key: () => 'acct', wait: '1m' }, run: () => 'charged' })
  .returns('charge');

/** A step lock held by another owner, and a run of `charge` waiting for it. */
async function contended(coordinator: (memory: MemoryCoordinator) => Coordinator) {
  const clock = new ManualClock({ autoAdvance: false });
  const memory = new MemoryCoordinator({ clock });
  await memory.lockAcquire({ key: 'acct', holder: { owner: 'other' }, ttlMs: 3_600_000 });
  const t = createTestEngine({ clock, coordinator: coordinator(memory) });
  const run = t.run(charge, {});
  await settle();
  return { clock, memory, run, state: track(run) };
}

describe('a coordinator that offers no fast paths', () => {
  test('a contended step lock completes at the first poll after the release (nothing tells the waiter of it)', async () => {
    const { clock, memory, run, state } = await contended(requiredOnly);
    expect(clock.sleeps).toEqual([25]); // the first fallback poll
    await memory.lockRelease('acct', 'other');
    await settle();
    expect(state.settled).toBe(false); // no notification: the waiter sleeps on
    clock.advance(25);
    const result = await run;
    expect(result.status === 'completed' && result.value).toBe('charged');
    expect(await memory.lockState('acct')).toBeUndefined();
  });

  test('the polls grow (25 ms doubling to 1 s) until the holder lets go', async () => {
    const { clock, memory, run } = await contended(requiredOnly);
    for (let i = 0; i < 8; i++) {
      clock.advance(1_000);
      await settle();
    }
    expect(clock.sleeps.slice(0, 7)).toEqual([25, 50, 100, 200, 400, 800, 1_000]);
    await memory.lockRelease('acct', 'other');
    clock.advance(1_000);
    expect((await run).status).toBe('completed');
  });

  test('with the memory backend’s change notifications, the same release wakes the waiter at once', async () => {
    const { clock, memory, run } = await contended((m) => m);
    await memory.lockRelease('acct', 'other');
    const result = await run; // no clock advance
    expect(result.status === 'completed' && result.value).toBe('charged');
    expect(clock.sleeps).toEqual([25]);
  });

  test('the fallbacks: a wait for a change is a sleep on the clock, and the other parts do nothing', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const fast = fastPathsOf(requiredOnly(new MemoryCoordinator({ clock })));
    const wait = track(fast.waitForChange(clock, 'lock', 'k', 100));
    expect(fast.watch('lock', 'k')).toBeUndefined();
    expect(fast.cancels).toBeUndefined();
    await expect(fast.announceCancel('e')).resolves.toBeUndefined();
    expect(fast.wakeUpsDegraded()).toBe(false);
    expect(() => fast.onFreed(() => undefined)()).not.toThrow();
    expect(() => fast.onWakeUpsDegraded(() => undefined)()).not.toThrow();
    await settle();
    expect(wait.settled).toBe(false);
    clock.advance(100);
    await settle();
    expect(wait.settled).toBe(true);
  });
});
