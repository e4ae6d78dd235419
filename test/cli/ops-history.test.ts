/**
 * `ts-reactor executions list --tag key=value` against a real redis-server: the tag filter (one,
 * several, comma-separated) with paging and a time range, tags printed on the line, and a
 * malformed tag refused with exit 2 before Redis is read; `executions show` prints the tags.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { main } from '../../src/cli/main.js';
import { RECORD_VERSION, type ExecutionRecord } from '../../src/ports/store.js';
import { createRedisBackend, type RedisBackend } from '../../src/storage/redis/index.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';

const prefix = 'cli-history';
let redis: RedisServerHandle;
let backend: RedisBackend;
const target = () => ['--redis', redis.url, '--prefix', prefix];
const T = Date.now() - 60_000;

async function cli(args: readonly string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const record = (id: string, at: number, tags: Record<string, string>): ExecutionRecord => ({
  v: RECORD_VERSION,
  id,
  rootId: id,
  reactor: 'shipment',
  status: 'completed',
  input: {},
  steps: {},
  rollbackFailures: [],
  tags,
  createdAt: at,
  updatedAt: at + 5,
});

beforeAll(async () => {
  redis = await startRedisServer();
  backend = createRedisBackend({ url: redis.url, prefix });
  await backend.store.save(record('h-1', T, { orderId: '42', region: 'eu' }));
  await backend.store.save(record('h-2', T + 10, { orderId: '42', region: 'us' }));
  await backend.store.save(record('h-3', T + 20, { orderId: '43', region: 'eu' }));
});
afterAll(async () => {
  await backend?.close();
  await redis?.dispose();
});

test('executions list --tag filters by every tag given, pages with --cursor, prints the tags', async () => {
  const byOrder = await cli(['executions', 'list', '--tag', 'orderId=42', ...target()]);
  expect(byOrder.code).toBe(0);
  expect(byOrder.out.split('\n').map((l) => l.split(' ')[0])).toEqual(['h-2', 'h-1']);
  expect(byOrder.out).toContain('orderId=42,region=us');
  const both = await cli(['executions', 'list', '--tag', 'orderId=42', '--tag', 'region=eu', ...target()]);
  expect(both.out.split('\n').map((l) => l.split(' ')[0])).toEqual(['h-1']);
  expect((await cli(['executions', 'list', '--tag', 'orderId=42,region=eu', ...target()])).out).toBe(both.out);
  const first = await cli(['executions', 'list', '--tag', 'orderId=42', '--limit', '1', ...target()]);
  const cursor = /more: --cursor (\S+)/.exec(first.out)?.[1];
  expect(cursor).toBeDefined();
  const next = await cli(['executions', 'list', '--tag', 'orderId=42', '--cursor', cursor!, ...target()]);
  expect(next.out.split('\n').map((l) => l.split(' ')[0])).toEqual(['h-1']);
  const ranged = await cli([
    'executions',
    'list',
    '--tag',
    'region=eu',
    '--from',
    new Date(T + 15).toISOString(),
    ...target(),
  ]);
  expect(ranged.out.split('\n').map((l) => l.split(' ')[0])).toEqual(['h-3']);
});

test('executions show prints the tags', async () => {
  const shown = await cli(['executions', 'show', 'h-2', ...target()]);
  expect(shown.code).toBe(0);
  expect(shown.out).toContain('  tags       orderId=42, region=us');
});

test('executions list: a malformed --tag exits 2 naming it', async () => {
  for (const [bad, said] of [
    ['orderId', 'is not key=value'],
    ['bad key=1', 'key may hold only letters'],
    ['orderId=', 'value must not be empty'],
  ] as const) {
    const r = await cli(['executions', 'list', '--tag', bad, ...target()]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(said);
  }
});
