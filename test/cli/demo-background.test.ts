import { describe, expect, test } from 'vitest';
import { Redis } from 'ioredis';
import pg from 'pg';
import { runBackgroundDemo } from '../../src/cli/demo-background.js';
import { main } from '../../src/cli/main.js';
import { postgresBackendFactory } from '../../src/queue/bullmq-postgres.js';
import { usePostgresServer } from '../support/use-postgres-server.js';
import { useRedisServer } from '../support/use-redis-server.js';

async function demo(options: Parameters<typeof runBackgroundDemo>[0] = {}): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const code = await runBackgroundDemo({ ...options, write: (line) => lines.push(line) });
  return { code, lines };
}

/**
 * The park fallback in the story tests: ten minutes, out of reach, so a transfer that resumes
 * within the test's timeout was woken by a release (a busy machine may take seconds to get there).
 */
const OUT_OF_REACH_MS = 600_000;

function section(lines: readonly string[], label: string): string[] {
  const start = lines.findIndex((l) => l.startsWith(`== ${label} `));
  expect(start, `section ${label}`).toBeGreaterThanOrEqual(0);
  const end = lines.findIndex((l, i) => i > start && l.startsWith('== '));
  return lines
    .slice(start + 1, end === -1 ? undefined : end)
    .map((l) => l.trim().replace(/\s+/g, ' '))
    .filter((l) => l !== '');
}

/** What both modes must show: the contended acme transfers parked, were woken and completed; globex ran alongside. */
function expectTheStory(lines: readonly string[]): void {
  const parked = ['t-1', 't-2', 't-3'].filter((t) =>
    section(lines, t).some((l) => l.includes('PARKED: lock account:acme is held by')),
  );
  // All four are picked up at once, so two of the three find the lock held (on a starved machine, one might come late and not need to park).
  expect(parked.length).toBeGreaterThanOrEqual(1);
  for (const t of parked) {
    const story = section(lines, t);
    const at = (text: string): number => story.findIndex((l) => l.includes(text));
    expect(at('PARKED')).toBeGreaterThan(at('queued'));
    expect(story[at('PARKED')]).toMatch(
      /PARKED: lock account:acme is held by t-\d \(contention attempt 1\); the worker moves on$/,
    );
    expect(story[at('PARKED') + 1]).toMatch(
      /woken by t-\d's release \(\+\d+ ms\): a worker picks it up \(job #2\), \d+ ms before its fallback/,
    );
    expect(at('lock account:acme acquired')).toBeGreaterThan(at('PARKED'));
    expect(story.at(-1)).toMatch(/completed$/);
  }
  const globex = section(lines, 't-4');
  expect(globex.some((l) => l.includes('PARKED'))).toBe(false);
  expect(globex.at(-1)).toMatch(/completed$/);
  expect(lines).toContain(
    `3 transfers on account:acme ran one at a time: ${parked.length} parked (${parked.join(', ')}) and completed once the lock came free.`,
  );
  expect(lines.some((l) => /^all 4 transfers completed in \d+ ms in total/.test(l))).toBe(true);

  // The acme transfers never overlapped: each ran after the previous one finished.
  const spans = ['t-1', 't-2', 't-3']
    .map((t) => lines.find((l) => l.startsWith(`  ${t} `))!.match(/ran \+(\d+)\.\.\+(\d+) ms/)!)
    .map((m) => [Number(m[1]), Number(m[2])] as const)
    .sort((a, b) => a[0] - b[0]);
  expect(spans[1]![0]).toBeGreaterThanOrEqual(spans[0]![1]);
  expect(spans[2]![0]).toBeGreaterThanOrEqual(spans[1]![1]);
}

describe('ts-reactor demo --background (embedded default)', () => {
  test('the contended transfers park, are woken by the release and complete; exit 0', async () => {
    const { code, lines } = await demo({ parkFallbackMs: OUT_OF_REACH_MS });
    expect(code).toBe(0);
    expect(lines[0]).toContain('on the embedded engine (in-process worker pool, memory backend, no Redis)');
    expect(lines).toContain(
      'parking:  a worker that finds the lock held parks the execution at once (background.workerWaitMs = 0);',
    );
    expect(lines).toContain(
      `          the release wakes the first parked one (FIFO); a fallback job would resume it after ${OUT_OF_REACH_MS} ms`,
    );
    expectTheStory(lines);
    expect(lines.filter((l) => /^ {2}t-\d .* completed on in-process pool /.test(l))).toHaveLength(4);
  }, 180_000);

  test('through the command line', async () => {
    const out: string[] = [];
    expect(await main(['demo', '--background'], { out: (l) => out.push(l), err: (l) => out.push(l) })).toBe(0);
    expect(out.some((l) => l.startsWith('all 4 transfers completed'))).toBe(true);
  }, 180_000);

  test('bad demo options exit 2', async () => {
    const err: string[] = [];
    const io = { out: () => undefined, err: (l: string) => err.push(l) };
    expect(await main(['demo', '--workers', '3'], io)).toBe(2);
    expect(await main(['demo', '--redis', 'redis://127.0.0.1:1', '--workers', 'x'], io)).toBe(2);
    expect(await main(['demo', '--frobnicate'], io)).toBe(2);
    expect(err.join('\n')).toContain('--workers needs --redis <url>');
    expect(err.join('\n')).toContain('--workers must be an integer from 1 to 16; got "x"');
    expect(await main(['demo', '--redis', 'http://x'], io)).toBe(2);
    expect(err.join('\n')).toContain('--redis: "http://x" is not a Redis URL');
    expect(await main(['demo', '--redis', 'redis://127.0.0.1:1', '--postgres', 'postgres://127.0.0.1:1/x'], io)).toBe(
      2,
    );
    expect(err.join('\n')).toContain('--redis and --postgres name two backends: give one');
  });
});

describe('ts-reactor demo --redis (worker processes over a throwaway Redis)', () => {
  const redis = useRedisServer();

  // Generous: the demo starts two worker processes one after the other, which a busy machine may take a minute or more to do.
  test('two worker processes run the transfers; contended ones park and complete; children stop; keys removed', async () => {
    const { code, lines } = await demo({ redisUrl: redis.url, parkFallbackMs: OUT_OF_REACH_MS });
    expect(code, lines.join('\n')).toBe(0);
    expect(lines.filter((l) => /^started worker-\d \(pid \d+\)$/.test(l))).toHaveLength(2);
    expectTheStory(lines);
    expect(lines.filter((l) => /^ {2}t-\d .* completed on worker-[12] /.test(l))).toHaveLength(4);
    expect(lines.at(-1)).toBe('stopped worker-1 (exit 0), worker-2 (exit 0)');
    const client = new Redis(redis.url);
    try {
      expect(await client.dbsize()).toBe(0);
    } finally {
      await client.quit();
    }
  }, 400_000);
});

describe.skipIf(postgresBackendFactory() === undefined)(
  'ts-reactor demo --postgres (worker processes over a throwaway PostgreSQL, no Redis)',
  () => {
    const server = usePostgresServer();

    async function query<R>(text: string): Promise<R[]> {
      const client = new pg.Client({ connectionString: server.url });
      await client.connect();
      try {
        return (await client.query(text)).rows as R[];
      } finally {
        await client.end();
      }
    }

    test('two worker processes run the transfers; contended ones park and complete; schema and jobs removed', async () => {
      const { code, lines } = await demo({ postgresUrl: server.url, parkFallbackMs: OUT_OF_REACH_MS });
      expect(code, lines.join('\n')).toBe(0);
      expect(lines[0]).toBe(
        'ts-reactor demo --postgres: contended transfers on 2 worker processes over PostgreSQL alone (no Redis)',
      );
      expect(lines.join('\n')).toMatch(
        /on postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres, schema rx_demo_[0-9a-f]{8} and queue rx-demo-[0-9a-f]{8} \(removed at the end\)/,
      );
      expect(lines.filter((l) => /^started worker-\d \(pid \d+\)$/.test(l))).toHaveLength(2);
      expectTheStory(lines);
      expect(lines.filter((l) => /^ {2}t-\d .* completed on worker-[12] /.test(l))).toHaveLength(4);
      expect(lines.at(-1)).toBe('stopped worker-1 (exit 0), worker-2 (exit 0)');
      // The demo's schema is dropped, and its queues' jobs and events are gone.
      expect(await query("SELECT 1 FROM information_schema.schemata WHERE schema_name LIKE 'rx_demo_%'")).toEqual([]);
      for (const table of ['job', 'event'])
        expect(await query(`SELECT 1 FROM bullmq.${table} WHERE queue LIKE 'rx-demo-%'`), table).toEqual([]);
    }, 400_000);

    test('through the command line, with --workers 1', async () => {
      const out: string[] = [];
      const io = { out: (l: string) => out.push(l), err: (l: string) => out.push(l) };
      expect(await main(['demo', '--postgres', server.url, '--workers', '1'], io), out.join('\n')).toBe(0);
      expect(out.some((l) => l.startsWith('all 4 transfers completed'))).toBe(true);
      expect(out.at(-1)).toBe('stopped worker-1 (exit 0)');
    }, 400_000);

    test('a URL of another backend, or a database that cannot be reached: exit 2, nothing started', async () => {
      const err: string[] = [];
      const io = { out: (l: string) => err.push(l), err: (l: string) => err.push(l) };
      expect(await main(['demo', '--postgres', 'redis://127.0.0.1:1'], io)).toBe(2);
      expect(err.join('\n')).toContain('ts-reactor demo: --postgres:');
      expect(await main(['demo', '--postgres', 'postgres://app:secret@127.0.0.1:1/app'], io)).toBe(2);
      expect(err.join('\n')).toContain(
        'ts-reactor demo: cannot reach PostgreSQL at postgres://app:***@127.0.0.1:1/app',
      );
      expect(err.join('\n')).not.toContain('secret');
      expect(err.some((l) => l.startsWith('started worker'))).toBe(false);
    }, 120_000);
  },
);
