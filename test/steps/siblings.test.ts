/** Steps of one execution running side by side on one step-level exclusive key serialize. */
import { expect, test } from 'vitest';
import { z } from 'zod';
import { defineStep, reactor } from '../../src/index.js';
import { createTestEngine } from '../../src/testing/index.js';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('map elements of one execution on one account never overlap inside the locked step', async () => {
  let inside = 0;
  let max = 0;
  const charge = defineStep({
    input: { account: z.string(), n: z.number() },
    lock: { key: ({ account }) => `acct:${account}` },
    run: async () => {
      inside++;
      max = Math.max(max, inside);
      for (let i = 0; i < 5; i++) await tick();
      inside--;
    },
  });
  const r = reactor('fan')
    .input({ items: z.array(z.number()) })
    .map('charges', {
      source: ($) => $.input('items'),
      each: charge,
      args: (n) => ({ account: 'one', n }),
      maxConcurrency: 4,
    })
    .build();
  const t = createTestEngine();
  expect((await t.run(r, { items: [1, 2, 3, 4, 5, 6] })).status).toBe('completed');
  expect(max).toBe(1);
});

test('parallel sibling steps on the same key serialize; on different keys, and in unlocked steps, they overlap', async () => {
  let inside = 0;
  let max = 0;
  let unlocked = 0;
  let maxUnlocked = 0;
  const body = async (): Promise<void> => {
    inside++;
    max = Math.max(max, inside);
    for (let i = 0; i < 5; i++) await tick();
    inside--;
  };
  const free = async (): Promise<void> => {
    unlocked++;
    maxUnlocked = Math.max(maxUnlocked, unlocked);
    for (let i = 0; i < 5; i++) await tick();
    unlocked--;
  };
  const r = reactor('siblings')
    .step('a', { lock: { key: () => 'same' }, run: body })
    .step('b', { lock: { key: () => 'same' }, run: body })
    .step('c', { semaphore: { key: () => 'same-sem', limit: 1 }, run: free })
    .step('d', { run: free })
    .build();
  const t = createTestEngine();
  expect((await t.run(r, {})).status).toBe('completed');
  expect(max).toBe(1);
  expect(maxUnlocked).toBe(2);
});
