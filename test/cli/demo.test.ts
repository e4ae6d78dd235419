import { describe, expect, test } from 'vitest';
import { runDemo } from '../../src/cli/demo.js';
import { main } from '../../src/cli/main.js';

async function demoLines(): Promise<string[]> {
  const lines: string[] = [];
  await runDemo((line) => lines.push(line));
  return lines;
}

function section(lines: readonly string[], heading: string): string[] {
  const start = lines.findIndex((l) => l.startsWith(`== ${heading}`));
  expect(start, `section "${heading}"`).toBeGreaterThanOrEqual(0);
  const end = lines.findIndex((l, i) => i > start && l.startsWith('== '));
  return lines
    .slice(start, end === -1 ? undefined : end)
    .map((l) => l.trim().replace(/\s+/g, ' '))
    .filter((l) => l !== '');
}

describe('ts-reactor demo', () => {
  test('prints the success, retry and rollback scenarios', async () => {
    const lines = await demoLines();

    const success = section(lines, '1.');
    expect(success).toContain('start fraud-check (attempt 1) [running at once: reserve-stock, fraud-check]');
    expect(success.indexOf('start fraud-check (attempt 1) [running at once: reserve-stock, fraud-check]')).toBeLessThan(
      success.indexOf('done reserve-stock'),
    );
    expect(success.at(-1)).toBe('=> completed: {"orderId":"A-1001","chargeId":"ch-1","tracking":"TRK-A-1001"}');
    expect(success.join('\n')).toContain('"cardToken":"[redacted]"');

    const retry = section(lines, '2.');
    expect(retry).toContain('retry charge-card: "payment provider timed out"; attempt 2 in 50 ms');
    expect(retry).toContain('start charge-card (attempt 2)');
    expect(retry.at(-1)).toMatch(/^=> completed after 1 retry\(ies\)/);

    const failure = section(lines, '3.');
    expect(failure).toContain('FAILED ship-order after 1 attempt(s): carrier does not deliver to AQ');
    const order = ['compensate ship-order', 'undo charge-card', 'undo reserve-stock'].map((l) => failure.indexOf(l));
    expect(order.every((i) => i > 0)).toBe(true);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(failure).toContain(
      'rolled back in this order: ship-order (compensated), charge-card (undone), reserve-stock (undone); rollback failures: 0',
    );
  });
});

describe('ts-reactor command line', () => {
  const capture = () => {
    const out: string[] = [];
    const err: string[] = [];
    return { out, err, io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
  };

  test('--help prints usage and exits 0', async () => {
    const c = capture();
    expect(await main(['--help'], c.io)).toBe(0);
    expect(c.out.join('\n')).toContain('Usage: ts-reactor <command>');
  });

  test('an unknown command prints usage on stderr and exits 2', async () => {
    const c = capture();
    expect(await main(['frobnicate'], c.io)).toBe(2);
    expect(c.err.join('\n')).toContain('unknown command "frobnicate"');
    expect(c.out).toEqual([]);
  });

  test('no command exits 2', async () => {
    const c = capture();
    expect(await main([], c.io)).toBe(2);
  });

  test('demo exits 0', async () => {
    const c = capture();
    expect(await main(['demo'], c.io)).toBe(0);
    expect(c.out.some((l) => l.includes('=> failed at ship-order'))).toBe(true);
  });
});
