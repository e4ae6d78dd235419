/**
 * `ts-reactor worker --contention-cap`: an integer ≥ 1, or `Infinity` to wait behind a live
 * holder for as long as it holds the key; anything else is one line on stderr and exit code 2.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { runWorkerCommand } from '../../src/cli/worker.js';
import { freePort } from '../support/redis-server.js';

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

function capture() {
  const err: string[] = [];
  return { err, io: { out: () => undefined, err: (l: string) => void err.push(l) } };
}

describe('ts-reactor worker --contention-cap', () => {
  test('a value that is neither an integer ≥ 1 nor Infinity is refused before Redis is reached', async () => {
    for (const value of ['lots', '0', '2.5', 'infinity']) {
      const c = capture();
      const args = ['--redis', 'redis://127.0.0.1:1', '--module', fixture('worker-reactors.ts')];
      expect(await runWorkerCommand([...args, '--contention-cap', value], c.io, { env: {} })).toBe(2);
      expect(c.err.join('\n')).toContain(`--contention-cap must be an integer ≥ 1 or Infinity; got "${value}"`);
    }
  });

  test('Infinity and an integer are accepted: the worker goes on to reach Redis', async () => {
    const port = await freePort(); // nothing listens: the command gets as far as the ping
    for (const value of ['Infinity', '3']) {
      const c = capture();
      const args = ['--redis', `redis://127.0.0.1:${port}`, '--module', fixture('worker-reactors.ts')];
      expect(
        await runWorkerCommand([...args, '--contention-cap', value], c.io, { env: {}, pingTimeoutMs: 1_000 }),
      ).toBe(2);
      expect(c.err.join('\n')).toContain(`cannot reach Redis at redis://127.0.0.1:${port}`);
      expect(c.err.join('\n')).not.toContain('--contention-cap');
    }
  });
});
