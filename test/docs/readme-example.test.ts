import { readFileSync } from 'node:fs';
import { expect, test, vi } from 'vitest';

const logged: string[] = [];
vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => void logged.push(parts.join(' ')));

// #region readme
import { z } from 'zod';
import { createEmbeddedEngine, reactor } from '../../src/index.js';

const balances = new Map([['alice', 100], ['bob', 0]]);
function move(account: string, delta: number) {
  const balance = balances.get(account);
  if (balance === undefined || balance + delta < 0) throw new Error(`cannot move ${delta} on "${account}"`);
  balances.set(account, balance + delta);
  return { account, balance: balance + delta };
}

const transfer = reactor('transfer')
  .input({ from: z.string(), to: z.string(), amount: z.number().positive() })
  .step('debit', {
    args: ($) => ({ from: $.input('from'), amount: $.input('amount') }),
    run: ({ from, amount }) => move(from, -amount),
    undo: (_debited, { from, amount }) => move(from, amount),
  })
  .step('credit', {
    args: ($) => ({ to: $.input('to'), amount: $.input('amount') }),
    waitFor: ['debit'],
    run: ({ to, amount }) => move(to, amount),
  })
  .returns('credit');

const engine = createEmbeddedEngine();
for (const to of ['bob', 'mallory']) {
  const result = await engine.run(transfer, { from: 'alice', to, amount: 30 });
  if (result.status === 'completed') console.log(`${to} now has ${result.value.balance}`);
  else if (result.status === 'failed') console.log(`failed at ${result.failedStep}: ${result.error.message}; debit undone`);
}
// #endregion

test('the README example runs: one transfer completes, one fails and is rolled back', () => {
  expect(logged).toEqual(['bob now has 30', 'failed at credit: cannot move 30 on "mallory"; debit undone']);
  expect(balances.get('alice')).toBe(70);
  expect(balances.get('bob')).toBe(30);
});

test('the README shows exactly this example', () => {
  const source = readFileSync(new URL(import.meta.url), 'utf8');
  const region = /\/\/ #region readme\n([\s\S]*?)\/\/ #endregion/.exec(source)?.[1]?.replace("'../../src/index.js'", "'ts-reactor'");
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const block = /<!-- example:start -->\n```ts\n([\s\S]*?)```\n<!-- example:end -->/.exec(readme)?.[1];
  expect(region).toBeDefined();
  expect(block).toBe(region);
});
