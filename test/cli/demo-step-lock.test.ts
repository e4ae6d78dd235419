/** `ts-reactor demo step-lock`: the serialized, contended and compensated paths, embedded, and over Redis or PostgreSQL with worker processes. */
import { Redis } from 'ioredis';
import { describe, expect, test } from 'vitest';
import { runStepLockDemo } from '../../src/cli/demo-step-lock.js';
import pg from 'pg';
import { main } from '../../src/cli/main.js';
import { postgresBackendFactory } from '../../src/queue/bullmq-postgres.js';
import { usePostgresServer } from '../support/use-postgres-server.js';
import { useRedisServer } from '../support/use-redis-server.js';

async function demo(options: Parameters<typeof runStepLockDemo>[0] = {}): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const code = await runStepLockDemo({ ...options, write: (line) => lines.push(line) });
  return { code, lines };
}

function expectThePaths(lines: readonly string[]): void {
  for (const check of [
    'all three completed',
    'the charge bodies on account:acme never overlapped (the step lock)',
    'p-1 and p-2 ran at the same time: one ran its steps while the other was running (only charge is locked)',
    'p-4 failed at notify',
    "the refund (charge's undo) ran holding account:acme: re-acquired, refunded, released",
    'no rollback failure',
  ]) {
    expect(lines, check).toContain(`  ok   ${check}`);
  }
  expect(lines.some((l) => l.startsWith('every path showed what it should'))).toBe(true);
}

describe('ts-reactor demo step-lock (embedded default)', () => {
  test('shows the three paths and exits 0; the contended payment parked and was woken', async () => {
    const { code, lines } = await demo();
    expect(code, lines.join('\n')).toBe(0);
    expectThePaths(lines);
    expect(lines.some((l) => /PARKED at step charge: lock account:acme is held/.test(l))).toBe(true);
    expect(lines.some((l) => /woken by the release of account:acme/.test(l))).toBe(true);
  });

  test('through the command line; bad options exit 2', async () => {
    const out: string[] = [];
    const io = { out: (l: string) => out.push(l), err: (l: string) => out.push(l) };
    expect(await main(['demo', 'step-lock'], io)).toBe(0);
    expect(await main(['demo', 'step-lock', '--workers', '2'], io)).toBe(2);
    expect(await main(['demo', 'step-lock', '--nope'], io)).toBe(2);
  });
});

describe('ts-reactor demo step-lock --redis (worker processes over a throwaway Redis)', () => {
  const redis = useRedisServer();

  test(
    'two worker processes run the payments; the three paths hold; the keys are removed',
    { timeout: 60_000 },
    async () => {
      const { code, lines } = await demo({ redisUrl: redis.url });
      expect(code, lines.join('\n')).toBe(0);
      expect(lines.filter((l) => /^started worker-\d \(pid \d+\)$/.test(l))).toHaveLength(2);
      expectThePaths(lines);
      expect(lines.some((l) => / on worker-[12]/.test(l))).toBe(true);
      const client = new Redis(redis.url);
      try {
        expect(await client.dbsize()).toBe(0);
      } finally {
        await client.quit();
      }
    },
  );
});

describe.skipIf(postgresBackendFactory() === undefined)(
  'ts-reactor demo step-lock --postgres (worker processes over a throwaway PostgreSQL, no Redis)',
  () => {
    const server = usePostgresServer();

    test(
      'two worker processes run the payments; the three paths hold; the schema is dropped',
      { timeout: 400_000 },
      async () => {
        const { code, lines } = await demo({ postgresUrl: server.url });
        expect(code, lines.join('\n')).toBe(0);
        expect(lines[0]).toMatch(
          /^ts-reactor demo step-lock --postgres: .* schema rx_demo_[0-9a-f]{8} and queue rx-demo-[0-9a-f]{8}, removed at the end; no Redis\)$/,
        );
        expect(lines.filter((l) => /^started worker-\d \(pid \d+\)$/.test(l))).toHaveLength(2);
        expectThePaths(lines);
        expect(lines.some((l) => / on worker-[12]/.test(l))).toBe(true);
        const client = new pg.Client({ connectionString: server.url });
        await client.connect();
        try {
          const left = await client.query(
            "SELECT 1 FROM information_schema.schemata WHERE schema_name LIKE 'rx_demo_%'",
          );
          expect(left.rows).toEqual([]);
        } finally {
          await client.end();
        }
      },
    );

    test('--redis beside --postgres, or --workers alone: exit 2', async () => {
      const err: string[] = [];
      const io = { out: (l: string) => err.push(l), err: (l: string) => err.push(l) };
      expect(await main(['demo', 'step-lock', '--redis', 'redis://127.0.0.1:1', '--postgres', server.url], io)).toBe(2);
      expect(err.join('\n')).toContain('--redis and --postgres name two backends: give one');
      expect(await main(['demo', 'step-lock', '--workers', '2'], io)).toBe(2);
      expect(err.join('\n')).toContain('--workers needs --redis <url> or --postgres <url>');
    });
  },
);
