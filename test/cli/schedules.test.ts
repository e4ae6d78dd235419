/**
 * `ts-reactor schedules list|add|remove` against a throwaway redis-server, through `main()`.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { main } from '../../src/cli/main.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';

const fixture = fileURLToPath(new URL('./fixtures/worker-reactors.ts', import.meta.url));
const app = fileURLToPath(new URL('./fixtures/worker-app.ts', import.meta.url));
let redis: RedisServerHandle;

beforeAll(async () => {
  redis = await startRedisServer();
});

afterAll(async () => {
  await redis?.dispose();
});

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['schedules', ...args, '--redis', redis.url, '--prefix', 'cli-sched'], {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('ts-reactor schedules', () => {
  test('add, list with next runs, remove', async () => {
    const added = await cli('add', 'nightly', '--reactor', 'report', '--cron', '0 2 * * *', '--tz', 'Europe/Berlin');
    expect(added).toMatchObject({ code: 0, err: '' });
    expect(added.out).toMatch(
      /^saved nightly {2}report {2}cron "0 2 \* \* \*" Europe\/Berlin {2}missed=skip {2}next: /,
    );
    expect((await cli('add', 'often', '--reactor', 'report', '--every', '5m', '--input', '{"a":1}')).code).toBe(0);
    const listed = await cli('list', '--runs', '2');
    expect(listed.code).toBe(0);
    expect(listed.out.split('\n').map((l) => l.split('  ')[0])).toEqual(['nightly', 'often']);
    const json = JSON.parse((await cli('list', '--json')).out) as { id: string; input?: unknown; nextRuns: string[] }[];
    expect(json.find((s) => s.id === 'often')).toMatchObject({ input: { a: 1 } });
    expect(json[0]!.nextRuns).toHaveLength(5);
    expect(await cli('remove', 'often')).toMatchObject({ code: 0, out: 'removed often' });
    expect(await cli('remove', 'often')).toMatchObject({ code: 1, out: 'no schedule often' });
    expect((await cli('remove', 'nightly')).code).toBe(0);
    expect((await cli('list')).out).toBe('(no schedules)');
  });

  test('refusals: a bad cron, a bad zone, a short interval, an unknown reactor of the module, bad usage', async () => {
    const bad = await cli('add', 'x', '--reactor', 'report', '--cron', '61 * * * *');
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/cron\.pattern .*\(schedule_invalid\)$/);
    expect((await cli('add', 'x', '--reactor', 'r', '--cron', '0 2 * * *', '--tz', 'Nowhere/City')).err).toMatch(
      /cron\.tz/,
    );
    expect((await cli('add', 'x', '--reactor', 'r', '--every', '500ms')).err).toMatch(/at least 1s/);
    const unknown = await cli('add', 'x', '--reactor', 'nobody', '--every', '1m', '--module', fixture);
    expect(unknown).toMatchObject({ code: 1 });
    expect(unknown.err).toMatch(/reactor_unknown/);
    expect((await cli('add', 'x', '--every', '1m')).code).toBe(2);
    expect((await cli('frobnicate')).code).toBe(2);
    expect((await cli('list')).out).toBe('(no schedules)');
  });

  test("--module checks --input-from against a defineWorker app's scheduleInputs (TypeScript)", async () => {
    const known = await cli(
      'add',
      'tick',
      '--reactor',
      'app-sleeper',
      '--every',
      '1h',
      '--input-from',
      'hourly',
      '--module',
      app,
    );
    expect(known, known.err).toMatchObject({ code: 0, err: '' });
    expect(known.out).toMatch(/^saved tick {2}app-sleeper {2}every 3600000 ms/);
    const unknown = await cli(
      'add',
      'other',
      '--reactor',
      'app-sleeper',
      '--every',
      '1h',
      '--input-from',
      'nope',
      '--module',
      app,
    );
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/inputFrom.*\(schedule_invalid\)$/);
    expect(await cli('remove', 'tick')).toMatchObject({ code: 0 });
  });
});
