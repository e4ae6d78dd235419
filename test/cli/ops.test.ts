/**
 * The operations commands against a throwaway redis-server: `locks`, `executions`,
 * `ordered-lock`, `dashboard`; a few spawned as real processes under tsx (exit codes, one-line
 * errors, progress on stderr), the rest through `main()` in this process.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { main } from '../../src/cli/main.js';
import { executionsCommand, runOps } from '../../src/cli/ops.js';
import { runDashboardCommand } from '../../src/cli/dashboard.js';
import { RECORD_VERSION, type ExecutionRecord } from '../../src/ports/store.js';
import { createRedisBackend, type RedisBackend } from '../../src/storage/redis/index.js';
import { freePort, startRedisServer, type RedisServerHandle } from '../support/redis-server.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const prefix = 'cli-ops';

function run(
  args: readonly string[],
  env: Record<string, string | undefined> = {},
): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, REDIS_URL: undefined, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) =>
    child.once('exit', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started })),
  );
}

async function inProcess(args: readonly string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const record = (id: string, overrides: Partial<ExecutionRecord>): ExecutionRecord => ({
  v: RECORD_VERSION,
  id,
  rootId: id,
  reactor: 'transfer',
  status: 'running',
  input: { account: 'acme' },
  steps: {},
  rollbackFailures: [],
  createdAt: Date.now(),
  updatedAt: Date.now(),
  ...overrides,
});

let redis: RedisServerHandle;
let backend: RedisBackend;
const target = () => ['--redis', redis.url, '--prefix', prefix];

beforeAll(async () => {
  redis = await startRedisServer();
  backend = createRedisBackend({ url: redis.url, prefix });
  const c = backend.coordinator;
  await c.lockAcquire({
    key: 'acct:acme',
    holder: { owner: 'exec-holder', executionId: 'exec-holder', reactor: 'transfer', step: 'post' },
    ttlMs: 60_000,
  });
  await backend.store.save(record('exec-holder', { status: 'running', createdAt: Date.now() - 2_000 }));
  await backend.store.save(
    record('exec-waiter', {
      status: 'parked',
      background: {
        jobs: 2,
        contention: 1,
        waitingFor: { primitive: 'lock', key: 'acct:acme', attempt: 1, jobId: 'exec-waiter:2' },
      },
    }),
  );
  await backend.store.save(
    record('exec-failed', {
      status: 'failed',
      failedStep: 'post',
      error: { name: 'Error', message: 'ledger down', cause: { name: 'Error', message: 'ECONNRESET' } },
      createdAt: Date.now() - 5_000,
    }),
  );
  for (let i = 0; i < 3; i++) await c.orderedTicket('feed');
});

afterAll(async () => {
  await backend?.close();
  await redis?.dispose();
});

describe('spawned under tsx', () => {
  test('locks [pattern] prints each hold with its owning step and the parked waiter; progress goes to stderr', async () => {
    const r = await run(['locks', 'acct:*', '--progress', ...target()]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('lock acct:acme  held by exec-holder (transfer, step post)  nesting 1');
    expect(r.stdout).toContain('    waiting: exec-waiter (transfer, attempt 1)');
    expect(r.stdout).not.toContain('ordered feed');
    expect(r.stderr).toMatch(/ts-reactor locks: scanning lock keys… \d+ examined/);
  });

  test('ordered-lock skip moves the cursor and prints it before and after (REDIS_URL from the environment)', async () => {
    const r = await run(['ordered-lock', 'skip', 'feed', '--prefix', prefix], { REDIS_URL: redis.url });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/before: ordered feed {2}next 1 {2}last completed 0/);
    expect(r.stdout).toMatch(/after: {2}ordered feed {2}next 2 {2}last completed 1/);
    expect(await backend.coordinator.orderedState('feed')).toMatchObject({ lastCompleted: 1 });
  });

  test('a bad URL and an unreachable Redis are one line on stderr and exit code 2, fast', async () => {
    const bad = await run(['locks', '--redis', 'http://cache:6379']);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toEqual([
      'ts-reactor locks: --redis: "http://cache:6379" is not a URL of a backend (scheme http:); expected redis://host[:port] or rediss://host[:port] or postgres://host[:port] or postgresql://host[:port]',
    ]);
    const port = await freePort();
    const down = await run(['executions', 'list', '--redis', `redis://127.0.0.1:${port}`, '--connect-timeout', '1000']);
    expect(down.code).toBe(2);
    expect(down.stderr.trim().split('\n')).toHaveLength(1);
    expect(down.stderr).toContain(`ts-reactor executions: cannot reach Redis at redis://127.0.0.1:${port}: `);
    expect(down.stderr).toContain('ECONNREFUSED');
    const missing = await inProcess(['locks']);
    expect(missing).toMatchObject({
      code: 2,
      err: 'ts-reactor locks: missing --redis <url> (or set REDIS_URL), or --redis-cluster <nodes>',
    });
  });
});

describe('in process', () => {
  test('a PostgreSQL URL given to --redis is a usage error naming --postgres; a scheme of no backend is refused typed; exit 2, nothing opened', async () => {
    const postgres = await inProcess(['locks', '--redis', 'postgres://app:secret@db:5432/app']);
    expect(postgres).toMatchObject({ code: 2, err: 'ts-reactor locks: --redis: a postgres URL: use --postgres <url>' });
    const other = await inProcess(['locks', '--redis', 'mysql://app:secret@db:3306/app']);
    expect(other.code).toBe(2);
    expect(other.err).toContain('"mysql://app:***@db:3306/app" is not a URL of a backend (scheme mysql:)');
  });

  test('a queued execution is listed and filtered as queued; --status pending is accepted as its other name', async () => {
    const own = `${prefix}-queued`;
    const other = createRedisBackend({ url: redis.url, prefix: own });
    try {
      await other.store.save(record('exec-queued', { status: 'pending' }));
      await other.store.save(record('exec-busy', { status: 'running' }));
      const at = ['--redis', redis.url, '--prefix', own];
      for (const name of ['queued', 'pending']) {
        const r = await inProcess(['executions', 'list', '--status', name, ...at]);
        expect(r.code, r.err).toBe(0);
        expect(r.out).toMatch(/^exec-queued {2}transfer +queued /);
        expect(r.out).not.toContain('exec-busy');
      }
      const json = await inProcess(['executions', 'list', '--json', ...at]);
      const page = JSON.parse(json.out) as { items: { id: string; status: string }[] };
      expect(page.items.find((i) => i.id === 'exec-queued')?.status).toBe('queued');
      const shown = await inProcess(['executions', 'show', 'exec-queued', ...at]);
      expect(shown.out).toContain('status     queued');
    } finally {
      await other.close();
    }
  });

  test('executions list filters by status and prints the parked key; --json gives the read model page', async () => {
    const parked = await inProcess(['executions', 'list', '--status', 'parked', ...target()]);
    expect(parked.code).toBe(0);
    expect(parked.out).toMatch(/^exec-waiter {2}transfer +parked .* waits for lock acct:acme$/);
    const json = await inProcess(['executions', 'list', '--json', '--limit', '2', ...target()]);
    const page = JSON.parse(json.out) as { items: { id: string }[]; cursor?: string };
    expect(page.items.map((i) => i.id)).toEqual(['exec-waiter', 'exec-holder']);
    expect(page.cursor).toBeDefined();
    const rest = await inProcess(['executions', 'list', '--cursor', page.cursor!, ...target()]);
    expect(rest.out).toContain('exec-failed');
    const recent = await inProcess([
      'executions',
      'list',
      '--from',
      new Date(Date.now() - 3_000).toISOString(),
      ...target(),
    ]);
    expect(recent.out).not.toContain('exec-failed');
  });

  test('executions show prints the failure with its cause; an unknown id exits 1', async () => {
    const shown = await inProcess(['executions', 'show', 'exec-failed', ...target()]);
    expect(shown.code).toBe(0);
    expect(shown.out).toContain('  error      Error: ledger down (step post)');
    expect(shown.out).toContain('    caused by Error: ECONNRESET');
    const waiter = await inProcess(['executions', 'show', 'exec-waiter', ...target()]);
    expect(waiter.out).toContain('  waits for  lock acct:acme (attempt 1); held by exec-holder (transfer, step post)');
    expect(await inProcess(['executions', 'show', 'nope', ...target()])).toMatchObject({
      code: 1,
      err: 'ts-reactor executions show: no execution nope (or its record expired)',
    });
    expect((await inProcess(['executions', 'frobnicate', ...target()])).code).toBe(2);
  });

  test('a paused execution shows its interrupts in list and show; show lists the child executions with their status', async () => {
    const links = createRedisBackend({ url: redis.url, prefix: 'cli-ops-links' });
    const at = ['--redis', redis.url, '--prefix', 'cli-ops-links'];
    const timeoutAt = Date.parse('2026-12-01T10:00:00Z');
    try {
      await links.store.save(
        record('exec-paused', {
          reactor: 'approval',
          status: 'paused',
          interrupts: [
            { step: 'review.approve', correlationId: 'po-7', pausedAt: Date.now(), timeoutAt, invalidAttempts: 1 },
            { step: 'sign', pausedAt: Date.now(), invalidAttempts: 0 },
          ],
        }),
      );
      const event = (name: string, matchKey: string) => ({ name, matchKey, since: Date.now(), args: {} });
      await links.store.save(
        record('exec-event', {
          reactor: 'checkout',
          status: 'paused',
          interrupts: [
            {
              step: 'payment',
              pausedAt: Date.now(),
              timeoutAt,
              invalidAttempts: 0,
              event: event('payment.settled', '["o-1"]'),
            },
          ],
        }),
      );
      await links.store.save(
        record('exec-mixed', {
          reactor: 'approval',
          status: 'paused',
          interrupts: [
            { step: 'sign', pausedAt: Date.now(), invalidAttempts: 0 },
            { step: 'parcel', pausedAt: Date.now(), invalidAttempts: 0, event: event('parcel.ready', '') },
          ],
        }),
      );
      await links.store.save(
        record('exec-parent', {
          reactor: 'shipping',
          status: 'parked',
          createdAt: Date.now() - 1_000,
          steps: { ship: { status: 'dispatched', attempts: 1, unitId: 'exec-unit' } },
          background: {
            jobs: 1,
            contention: 0,
            waitingFor: { primitive: 'async', key: 'exec-unit', attempt: 1, jobId: 'exec-parent:1' },
          },
        }),
      );
      await links.store.save(
        record('exec-unit', { reactor: 'shipping', status: 'running', parentId: 'exec-parent', rootId: 'exec-parent' }),
      );
      await links.store.save(
        record('exec-child', { reactor: 'audit', status: 'completed', parentId: 'exec-parent', rootId: 'exec-parent' }),
      );

      const paused = await inProcess(['executions', 'list', '--status', 'paused', ...at]);
      expect(paused.code).toBe(0);
      expect(paused.out).toMatch(
        /^exec-paused {2}approval +paused .* paused at interrupt review\.approve \(correlation po-7, timeout 2026-12-01 10:00:00\), sign \(no timeout\)$/m,
      );
      const shown = await inProcess(['executions', 'show', 'exec-paused', ...at]);
      expect(shown.out).toContain('  interrupt  review.approve (correlation po-7, timeout 2026-12-01 10:00:00)');
      expect(shown.out).toContain('  interrupt  sign (no timeout)');
      // A wait for an event is no interrupt: it names its event, as the dashboard's "Waiting for event" does.
      expect(paused.out).toMatch(
        /^exec-event {2}checkout +paused .* waiting for event payment\.settled at step payment \(match key \["o-1"\], timeout 2026-12-01 10:00:00\)$/m,
      );
      expect(paused.out).toMatch(
        /^exec-mixed {2}approval +paused .* paused at interrupt sign \(no timeout\); waiting for event parcel\.ready at step parcel \(no match key, no timeout\)$/m,
      );
      const waiting = await inProcess(['executions', 'show', 'exec-event', ...at]);
      expect(waiting.out).toContain(
        '  waits for  event payment.settled at step payment (match key ["o-1"], timeout 2026-12-01 10:00:00)',
      );
      expect(waiting.out).not.toContain('interrupt');

      const parent = await inProcess(['executions', 'show', 'exec-parent', ...at]);
      expect(parent.code).toBe(0);
      const children = parent.out.split('\n').filter((l) => l.startsWith('    exec-'));
      expect(parent.out).toContain('  children (2)');
      expect(children).toHaveLength(2);
      expect(children).toContainEqual(
        expect.stringMatching(/^ {4}exec-unit {2}shipping +running +async unit of step ship {2}\(awaited\)$/),
      );
      expect(children).toContainEqual(expect.stringMatching(/^ {4}exec-child {2}audit +completed$/));
      const lonely = await inProcess(['executions', 'show', 'exec-child', ...at]);
      expect(lonely.out).toContain('  parent     exec-parent');
      expect(lonely.out).not.toContain('children');
    } finally {
      await links.close();
    }
  });

  test('executions list: a bad --limit or --status exits 2 naming the values; an empty prefix is reported', async () => {
    for (const bad of ['0', 'abc', '1001', '2.5']) {
      const r = await inProcess(['executions', 'list', '--limit', bad, ...target()]);
      expect(r.code).toBe(2);
      expect(r.err).toContain(`--limit must be an integer from 1 to 1000; got "${bad}"`);
    }
    // The bound is engine.list's: the largest page it returns is accepted here too.
    expect((await inProcess(['executions', 'list', '--limit', '1000', ...target()])).code).toBe(0);
    const status = await inProcess(['executions', 'list', '--status', 'bogus', ...target()]);
    expect(status.code).toBe(2);
    expect(status.err).toContain('--status must be one of queued, running, parked');
    const other = await inProcess(['executions', 'list', '--redis', redis.url, '--prefix', 'nothing-here']);
    expect(other.code).toBe(0);
    expect(other.out).toBe(
      '(no executions match) — no key exists under the prefix "nothing-here"; does the app use another prefix? (--prefix, TS_REACTOR_PREFIX)',
    );
    // The prefix from the environment, as the worker reads it; --prefix wins over it.
    const withEnv = async (args: readonly string[], env: Record<string, string>) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runOps('executions', executionsCommand, args, {
        out: (l) => void out.push(l),
        err: (l) => void err.push(l),
        env,
      });
      return { code, out: out.join('\n'), err: err.join('\n') };
    };
    const fromEnv = await withEnv(['list', '--redis', redis.url], { TS_REACTOR_PREFIX: prefix });
    expect(fromEnv.code).toBe(0);
    expect(fromEnv.out).toContain('exec-waiter');
    const flagWins = await withEnv(['list', '--redis', redis.url, '--prefix', 'nothing-here'], {
      TS_REACTOR_PREFIX: prefix,
    });
    expect(flagWins.out).toContain('no key exists under the prefix "nothing-here"');
    const badEnv = await withEnv(['list', '--redis', redis.url], { TS_REACTOR_PREFIX: 'a b' });
    expect(badEnv.code).toBe(2);
    expect(badEnv.err).toContain('TS_REACTOR_PREFIX must be non-empty, without braces or whitespace; got "a b"');
    const none = await inProcess(['executions', 'list', '--reactor', 'no-such-reactor', ...target()]);
    expect(none.out).toBe('(no executions match)');
  });

  test('ordered-lock peek reads and reset starts a new epoch', async () => {
    const peek = await inProcess(['ordered-lock', 'peek', 'feed', '--json', ...target()]);
    const before = JSON.parse(peek.out) as { epoch: number; issued: number };
    expect(before.issued).toBe(3);
    const reset = await inProcess(['ordered-lock', 'reset', 'feed', '--json', ...target()]);
    const { after } = JSON.parse(reset.out) as { after: { epoch: number; issued: number; drained: boolean } };
    expect(after.epoch).toBeGreaterThan(before.epoch);
    expect(after).toMatchObject({ issued: 0, drained: true });
    expect((await inProcess(['ordered-lock', 'jump', 'feed', ...target()])).code).toBe(2);
  });

  test('dashboard serves the pages over Redis on the given port until stopped', async () => {
    const stop = new AbortController();
    const out: string[] = [];
    const err: string[] = [];
    let listening!: (line: string) => void;
    const listeningLine = new Promise<string>((resolve) => (listening = resolve));
    const running = runDashboardCommand(
      ['--port', '0', '--read-only', '--events', '--base-path', '/ops', ...target()],
      {
        out: (l) => {
          out.push(l);
          if (l.includes('listening on')) listening(l);
        },
        err: (l) => err.push(l),
      },
      { stop: stop.signal, signals: [] },
    );
    // Waits for the line itself (the test's timeout is the deadline); an early exit fails with its output.
    const line = await Promise.race([
      listeningLine,
      running.then((code) => `exited ${code} before listening: ${[...out, ...err].join('\n')}`),
    ]);
    const url = /listening on (\S+)/.exec(line)?.[1];
    expect(url, line).toBeDefined();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ops\/executions$/);
    const list = await (await fetch(url!)).text();
    expect(list).toContain('exec-waiter');
    const coordination = await (await fetch(url!.replace('/executions', '/coordination'))).text();
    expect(coordination).toContain('data-lock="acct:acme"');
    expect(coordination).toContain('data-waiter="exec-waiter"');
    // The queue view, the health routes and the metrics (prom-client is installed here).
    expect(await (await fetch(url!.replace('/executions', '/queue'))).text()).toContain('<h1>Queue <code>');
    // --events: the Events page and its link in the navigation.
    const events = await fetch(url!.replace('/executions', '/events'));
    expect(events.status).toBe(200);
    const eventsPage = await events.text();
    expect(eventsPage).toContain('<h1>Events');
    expect(eventsPage).toContain('href="/ops/events"');
    expect((await fetch(url!.replace('/executions', '/healthz'))).status).toBe(200);
    const ready = await fetch(url!.replace('/executions', '/readyz'));
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { checks: { name: string }[] }).checks.map((c) => c.name)).toEqual([
      'redis',
      'subscriptions',
    ]);
    const metrics = await fetch(url!.replace('/executions', '/metrics'));
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    expect(text).toMatch(/^ts_reactor_queue_jobs\{state="waiting"\} \d+$/m);
    // The holder runs, the waiter is parked behind it.
    expect(text).toMatch(/^ts_reactor_executions\{status="running"\} 1$/m);
    expect(text).toMatch(/^ts_reactor_executions\{status="parked"\} 1$/m);
    const busyPort = /:(\d+)\//.exec(url!)?.[1];
    const busy = await inProcess(['dashboard', '--port', busyPort!, ...target()]);
    expect(busy.code).toBe(2);
    expect(busy.err).toMatch(
      new RegExp(`^ts-reactor dashboard: cannot listen on 127\\.0\\.0\\.1:${busyPort}: .*EADDRINUSE`),
    );
    stop.abort();
    expect(await running).toBe(0);
    expect(out.at(-1)).toBe('ts-reactor dashboard: stopped');
  });
});
