/**
 * A sweeping worker frozen in the middle of a sweep (a real process stopped with SIGSTOP) loses
 * the sweep lock; another worker's sweep then runs while the frozen sweep has executions left on
 * its page. Continued, the frozen sweep finds them moved on and leaves them: every stranded
 * execution is recovered once (docs/background.md, the recovery sweep).
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { afterAll, expect, test } from 'vitest';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import type { ReactorEvent } from '../../src/index.js';
import type { SweepReport } from '../../src/engine/jobs/sweep.js';
import { toBullmqJobId } from '../../src/queue/job-id.js';
import { spawnJsonChild } from '../support/json-child.js';
import { useRedisServer } from '../support/use-redis-server.js';
import type { SweeperConfig } from './fixtures/sweep-sweeper.js';
import { sweepReactor } from './fixtures/sweep-reactors.js';

const SWEEPER = fileURLToPath(new URL('./fixtures/sweep-sweeper.ts', import.meta.url));
const TTL = 1_000;
/** The sweep lock lives 0.8 × this: 800 ms. */
const SWEEP_INTERVAL = 1_000;
const STRANDED = 20;

const server = useRedisServer();
const children = new Set<ChildProcess>();
const runtimes: RedisRuntime[] = [];
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await Promise.all(runtimes.map((r) => r.close()));
});

function runtimeOn(prefix: string): RedisRuntime {
  const runtime = createRedisRuntime({
    url: server.url,
    prefix,
    reactors: [sweepReactor(() => Promise.resolve())],
    background: { livenessTtlMs: TTL, sweepIntervalMs: SWEEP_INTERVAL },
  });
  runtimes.push(runtime);
  return runtime;
}

test('a sweeper frozen mid-sweep past its lock: the other sweep runs meanwhile, and each stranded execution is recovered once', async () => {
  const prefix = 'sweep-frozen';
  const here = runtimeOn(prefix);
  const definition = sweepReactor(() => Promise.resolve());
  // Executions whose jobs are gone: stranded `pending`, as after a Redis that lost its queue.
  const ids: string[] = [];
  const queue = new Queue('ts-reactor', { connection: { url: server.url }, prefix });
  try {
    for (let i = 0; i < STRANDED; i++) {
      const queued = await here.engine.start(definition, {});
      ids.push(queued.executionId);
      await (await queue.getJob(toBullmqJobId(`${queued.executionId}:1`)))?.remove();
    }
  } finally {
    await queue.close();
  }
  const recoveredHere: string[] = [];
  here.engine.subscribe((e: ReactorEvent) => void (e.type === 'run.recovered' && recoveredHere.push(e.executionId)));
  const config: SweeperConfig = { url: server.url, prefix, livenessTtlMs: TTL, sweepIntervalMs: SWEEP_INTERVAL };
  const sweeper = spawnJsonChild(SWEEPER, config, children);
  await sweeper.line((v) => v.ready === true);
  await sleep(TTL + 300); // the records are older than the lease: candidates for a sweep

  sweeper.child.stdin!.write('sweep\n');
  const first = await sweeper.line<{ recovered: string; at: number }>((v) => typeof v.recovered === 'string');
  await expect.poll(() => processState(sweeper.pid)).toBe('T'); // stopped, inside its sweep
  await sleep(SWEEP_INTERVAL); // its sweep lock (800 ms) lapses: nobody renews it

  const report = await here.engine.sweep();
  expect(report.ran).toBe(true);
  sweeper.child.kill('SIGCONT');
  const { swept } = await sweeper.line<{ swept: SweepReport }>((v) => typeof v.swept === 'object');
  console.info(
    `[sweep] frozen sweeper: recovered ${swept.requeued} before and after its freeze; the other sweep recovered ${report.requeued} meanwhile`,
  );

  // The two sweeps overlapped: the other began and ended while the frozen one was still under way.
  expect(report.startedAt).toBeGreaterThan(swept.startedAt);
  expect(report.finishedAt).toBeLessThan(swept.finishedAt);
  // Continued, the frozen sweep went through its whole page, the other's recoveries included, and
  // left every execution that had moved on: each was recovered once, by one of the two.
  expect(swept.checked).toBe(STRANDED);
  expect(swept.requeued).toBe(1);
  expect(report.requeued).toBe(STRANDED - 1);
  expect([first.recovered, ...recoveredHere].sort()).toEqual([...ids].sort());
  for (const id of ids) {
    const record = await here.engine.store.get(id);
    expect(record?.background?.recovered?.count, id).toBe(1);
    expect(
      (record?.trace ?? []).filter((e) => e.type === 'run.recovered'),
      id,
    ).toHaveLength(1);
  }
  // And each completes on a worker.
  here.startWorker({ concurrency: 4 });
  for (const id of ids) expect((await here.engine.wait(id, { timeoutMs: 30_000 }))?.status).toBe('completed');
  sweeper.child.kill('SIGKILL');
}, 90_000);

/** The state letter of a process (`T` when stopped), from /proc. */
async function processState(pid: number): Promise<string | undefined> {
  const { readFile } = await import('node:fs/promises');
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
}
