/**
 * Shutdown deadline, with real processes: two `ts-reactor worker` processes over a throwaway
 * `redis-server`. The first runs a step that lasts 60 s unless its signal aborts; SIGTERM with
 * `--shutdown-timeout 2000` makes it exit in about two seconds, and the second worker — started
 * with BullMQ's default stall detection (lock 30 s, check every 15 s), so a pass proves that no
 * stall detection was needed — resumes the execution at once and completes it. The record never
 * says failed, and the two bodies never overlap. A body that ignores its signal does not hold
 * the process past the deadline and its grace, and its execution's liveness lease is not
 * released while it might still run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { runWorkerCommand } from '../../src/cli/worker.js';
import { livenessKey } from '../../src/engine/model/keys.js';
import { createRedisBackend, type RedisBackend } from '../../src/storage/redis/index.js';
import { useRedisServer } from '../support/use-redis-server.js';
import { shutdownLong, type FixtureLine } from './fixtures/shutdown-reactors.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const fixture = fileURLToPath(new URL('./fixtures/shutdown-reactors.ts', import.meta.url));

interface Spawned {
  readonly child: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** The body entries and exits this process reported. */
  readonly lines: () => FixtureLine[];
  readonly exited: Promise<{ readonly code: number | null; readonly at: number }>;
}

function spawnWorker(role: 'victim' | 'deaf' | 'rescuer', args: readonly string[]): Spawned {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', 'worker', '--module', fixture, ...args],
    {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, REDIS_URL: undefined, SHUTDOWN_FIXTURE_ROLE: role },
    },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  // Timed at 'exit'; resolved at 'close', once its output has been read to the end.
  let exitAt = NaN;
  child.once('exit', () => (exitAt = performance.now()));
  const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
    child.once('close', (code) => resolve({ code, at: exitAt })),
  );
  const lines = (): FixtureLine[] =>
    err
      .split('\n')
      .filter((l) => l.startsWith('{"fixture"'))
      .map((l) => JSON.parse(l) as FixtureLine);
  return { child, stdout: () => out, stderr: () => err, lines, exited };
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const ready = (w: Spawned): Promise<void> =>
  until('the ready line', () => w.stdout().includes('ts-reactor worker: ready') || w.child.exitCode !== null).then(() =>
    expect(w.stdout(), w.stderr()).toContain('ready'),
  );

describe('SIGTERM with a shutdown deadline (worker processes over a throwaway Redis)', () => {
  const redis = useRedisServer();
  let runtime: RedisRuntime;
  let backend: RedisBackend;
  const spawned: Spawned[] = [];
  const prefix = (name: string): string => `fault-shutdown-${name}`;

  beforeAll(() => {
    backend = createRedisBackend({ url: redis.url, prefix: prefix('a') });
  });

  afterEach(async () => {
    for (const w of spawned.splice(0)) {
      if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
      await w.exited;
    }
    await runtime?.close();
  });

  afterAll(async () => {
    await backend?.close();
  });

  test(
    'the worker exits within the deadline and another worker finishes the execution at once, never failed, never overlapping',
    { timeout: 90_000 },
    async () => {
      runtime = createRedisRuntime({ url: redis.url, prefix: prefix('a'), reactors: [shutdownLong] });
      const victim = spawnWorker('victim', [
        '--redis',
        redis.url,
        '--prefix',
        prefix('a'),
        '--shutdown-timeout',
        '2000',
      ]);
      spawned.push(victim);
      await ready(victim);
      const queued = await runtime.engine.start(shutdownLong, {});
      const id = queued.executionId;
      await until('the victim to enter the long step', () => victim.lines().some((l) => l.fixture === 'enter'));

      // The rescuer: default stall detection (30 s lock, 15 s check), no deadline of its own.
      const rescuer = spawnWorker('rescuer', ['--redis', redis.url, '--prefix', prefix('a')]);
      spawned.push(rescuer);
      await ready(rescuer);

      // The record, every 10 ms, from now to the end.
      const statuses: string[] = [];
      let polling = true;
      const poll = (async () => {
        while (polling) {
          const status = (await runtime.engine.result(id))?.status ?? 'missing';
          if (statuses.at(-1) !== status) statuses.push(status);
          await new Promise((r) => setTimeout(r, 10));
        }
      })();

      const signalledAt = performance.now();
      victim.child.kill('SIGTERM');
      const exit = await victim.exited;
      const exitMs = exit.at - signalledAt;
      const done = await runtime.engine.wait(id, { timeoutMs: 25_000, pollMs: 10 });
      const doneMs = performance.now() - signalledAt;
      polling = false;
      await poll;
      const final = (await runtime.engine.result(id))?.status ?? 'missing'; // the poller's last read may predate the end
      if (statuses.at(-1) !== final) statuses.push(final);
      // The rescuer's exit line travels through a pipe: it may arrive after the record says completed.
      await until(
        "the rescuer's exit line",
        () => rescuer.lines().some((l) => l.fixture === 'exit' && l.executionId === id),
        5_000,
      );
      const victimLines = victim.lines().filter((l) => l.executionId === id);
      const rescuerLines = rescuer.lines().filter((l) => l.executionId === id);
      const gapMs = (rescuerLines[0]?.at ?? NaN) - (victimLines[1]?.at ?? NaN);
      console.info(
        `shutdown deadline 2000 ms: the victim exited ${Math.round(exitMs)} ms after SIGTERM; its body stopped ${gapMs} ms before the rescuer's began; the execution completed ${Math.round(doneMs)} ms after SIGTERM`,
      );

      expect(exit.code, victim.stderr()).toBe(0);
      expect(exitMs).toBeGreaterThanOrEqual(1_900);
      expect(exitMs).toBeLessThan(10_000); // ~2.1 s on an idle machine; generous for a loaded one
      expect(victim.stdout()).toContain(
        'shutdown deadline passed: 1 in-flight job(s) interrupted and handed back to the queue',
      );

      expect(done.status).toBe('completed');
      expect(done.status === 'completed' ? done.value : undefined).toEqual({
        finishedBy: rescuer.child.pid,
        role: 'rescuer',
      });
      expect(doneMs).toBeLessThan(20_000); // stall detection would need ≥ 30 s (the lock) after the victim's exit
      expect(statuses).not.toContain('failed');
      expect(statuses).not.toContain('rolling_back');
      expect(statuses.at(-1)).toBe('completed');
      // The handed-back job's attempt is counted (decision 118): with the default interval the stopped
      // job wrote no start, so it is recorded as one that may have run, and the rescuer runs attempt 2.
      expect(done.steps['long']).toMatchObject({ status: 'completed', attempts: 2 });
      expect(done.steps['long']?.runs?.map((r) => r.outcome)).toEqual(['may_have_run', 'succeeded']);
      expect(done.trace.some((e) => e.type === 'run.resumed' && e.jobId.includes(':handback:'))).toBe(true);

      // Entries and exits: the victim's body stopped (aborted by the shutdown) before the rescuer's began.
      expect(victimLines.map((l) => l.fixture)).toEqual(['enter', 'exit']);
      expect(victimLines[1]!.reason).toBe('worker_shutdown');
      expect(rescuerLines.map((l) => l.fixture)).toEqual(['enter', 'exit']);
      expect(rescuerLines.map((l) => l.attempt)).toEqual([2, 2]);
      expect(rescuerLines[0]!.at).toBeGreaterThanOrEqual(victimLines[1]!.at);
      expect(rescuerLines[0]!.at - victimLines[1]!.at).toBeLessThan(10_000);
    },
  );

  test(
    'a body that ignores its signal: the process exits after the deadline and its grace, and the execution keeps its liveness lease',
    { timeout: 60_000 },
    async () => {
      runtime = createRedisRuntime({ url: redis.url, prefix: prefix('a'), reactors: [shutdownLong] });
      const deaf = spawnWorker('deaf', ['--redis', redis.url, '--prefix', prefix('a'), '--shutdown-timeout', '1000']);
      spawned.push(deaf);
      await ready(deaf);
      const queued = await runtime.engine.start(shutdownLong, {});
      await until('the deaf worker to enter the long step', () =>
        deaf.lines().some((l) => l.fixture === 'enter' && l.executionId === queued.executionId),
      );

      const signalledAt = performance.now();
      deaf.child.kill('SIGTERM');
      const exit = await deaf.exited;
      const exitMs = exit.at - signalledAt;
      console.info(
        `shutdown deadline 1000 ms, a body deaf to its signal: the worker exited ${Math.round(exitMs)} ms after SIGTERM (code ${String(exit.code)})`,
      );
      expect(exit.code).toBe(1);
      expect(exitMs).toBeGreaterThanOrEqual(1_900); // deadline + 1 s grace
      expect(exitMs).toBeLessThan(10_000);
      expect(deaf.stderr()).toContain('still running 1000 ms after the shutdown deadline');
      expect(deaf.lines().filter((l) => l.fixture === 'exit')).toEqual([]); // it never returned: the process left it

      // The lease was not released while the body could still run: it lapses by its TTL instead.
      expect(await backend.coordinator.lockState(livenessKey(queued.executionId))).toBeDefined();
      expect((await runtime.engine.result(queued.executionId))?.status).toBe('running');
    },
  );
});

describe('ts-reactor worker --shutdown-timeout', () => {
  test.each(['20s', '-1', '1.5', ''])('a bad value (%j) is a usage error: exit 2', async (value) => {
    const err: string[] = [];
    const code = await runWorkerCommand(
      ['--redis', 'redis://127.0.0.1:1', '--module', fixture, `--shutdown-timeout=${value}`],
      { out: () => undefined, err: (l) => void err.push(l) },
    );
    expect(code).toBe(2);
    expect(err.join('\n')).toContain(`--shutdown-timeout must be an integer ≥ 0; got "${value}"`);
  });
});
