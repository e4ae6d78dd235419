/**
 * Cancel cascades in workers on every backend of the matrix (docs/decisions/087): on the server
 * backends with two real worker processes (`fixtures/cascade-worker-process.ts`) and an operator's
 * runtime of its own, on the memory backend with a worker in this process. An operator's cancel
 * of a parent with 3 running children ends all four `cancelled`, every child's undo before the
 * parent's (one file, appended to synchronously, is the sequence across the processes); a parent
 * queued between its jobs is rolled back by the operator's process, which cancels the children
 * running in the workers first; the parent's `deadline` cascades the same way. Each cancel's
 * reason reaches the process that runs the execution (decision 106): the parent ends with the
 * operator's reason, each child with "its parent <id> was cancelled". The memory twin with a
 * manual clock is `cancel-cascade.test.ts`.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, expect, test } from 'vitest';
import { describeOnBackends, type MatrixBackend, type MatrixRuntime } from '../support/backend-matrix.js';
import { CHILD_LINE_TIMEOUT_MS, spawnJsonChild, type JsonChild } from '../support/json-child.js';
import { until } from '../background/helpers.js';
import { CASCADE_DEADLINE_MS, cascadeReactors, fileLog } from './fixtures/cascade-reactors.js';

/** How long a step of the scenario is waited for: a deadline for a loaded machine, not a bound. */
const WAIT_MS = CHILD_LINE_TIMEOUT_MS;
/** A test's own deadline: the workers' start, the run to its holding point, the deadline, the ends. */
const TEST_TIMEOUT_MS = 4 * WAIT_MS + CASCADE_DEADLINE_MS;

const WORKER = fileURLToPath(new URL('./fixtures/cascade-worker-process.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'cascade-log-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let seq = 0;

interface Scenario {
  /** The operator's runtime (on memory, the worker's too). */
  readonly runtime: MatrixRuntime;
  readonly reactors: ReturnType<typeof cascadeReactors>;
  /** The worker processes (none on memory). */
  readonly workers: readonly JsonChild[];
  /** The log file. */
  readonly log: string;
}

/** The logged lines (`<pid> <time> <entry>`), in the order they happened across the processes. */
const lines = (log: string): string[] =>
  existsSync(log)
    ? readFileSync(log, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
    : [];
/** The logged entries, in their order across the processes. */
const entries = (log: string): string[] => lines(log).map((line) => line.split(' ').slice(2).join(' '));

/** Every child's undo is logged before the parent's. */
function expectChildrenFirst(logged: readonly string[]): void {
  const parentUndo = logged.indexOf('parent.undo');
  expect(parentUndo, logged.join(', ')).toBeGreaterThan(-1);
  for (const n of [1, 2, 3]) {
    const undo = logged.indexOf(`child${n}.undo`);
    expect(undo, `child${n} undone: ${logged.join(', ')}`).toBeGreaterThan(-1);
    expect(undo, `child${n} undone before the parent: ${logged.join(', ')}`).toBeLessThan(parentUndo);
  }
}

const holding = async (log: string): Promise<boolean> =>
  entries(log).filter((e) => e.endsWith('.holding')).length === 4;

describeOnBackends('cancel cascades in workers', (backend: MatrixBackend) => {
  const children = new Set<ChildProcess>();
  afterEach(() => {
    for (const child of children) child.kill('SIGKILL');
    children.clear();
  });

  /** Two worker processes and an operator's runtime (no worker) on a fresh namespace and log; on memory one runtime with its worker. */
  async function scenario(): Promise<Scenario> {
    const log = join(dir, `${backend.name}-${++seq}.log`);
    // The operator's process logs too: a queued parent's rollback runs here.
    const reactors = cascadeReactors(fileLog(log));
    const { parent, deadlined, retrying } = reactors;
    const runtime = backend.runtime({ reactors: [parent, deadlined, retrying], background: { workerWaitMs: 0 } });
    if (!backend.shared) {
      runtime.startWorker({ concurrency: 8 });
      return { runtime, reactors, workers: [], log };
    }
    const config = { backend: backend.name, address: backend.address(), namespace: runtime.namespace, log };
    const workers = [0, 1].map(() => spawnJsonChild(WORKER, config, children));
    await Promise.all(workers.map((w) => w.line((v) => v.ready === true)));
    return { runtime, reactors, workers, log };
  }

  test(
    'cancel of a parent with 3 running children: all end cancelled, the children rolled back first',
    async () => {
      const s = await scenario();
      const started = await s.runtime.engine.start(s.reactors.parent, {});
      await until(() => holding(s.log), WAIT_MS, 'parent and 3 children holding');
      const ids = ['c1', 'c2', 'c3'].map((c) => `${started.executionId}~${c}`);
      for (const id of ids) expect((await s.runtime.engine.result(id))?.status).not.toBe('cancelled');
      await s.runtime.engine.cancel(started.executionId, { reason: 'the customer withdrew the order' });
      // Each reason travels with its cancel to the worker process that runs the execution (decision 106).
      expect(await s.runtime.engine.wait(started.executionId, { timeoutMs: WAIT_MS, pollMs: 20 })).toMatchObject({
        status: 'cancelled',
        reason: 'the customer withdrew the order',
      });
      for (const id of ids)
        expect(await s.runtime.engine.wait(id, { timeoutMs: WAIT_MS, pollMs: 20 })).toMatchObject({
          status: 'cancelled',
          reason: `its parent ${started.executionId} was cancelled`,
        });
      expectChildrenFirst(entries(s.log));
      const trace = (await s.runtime.engine.result(started.executionId))?.trace ?? [];
      const cascaded = trace.filter((e) => e.type === 'async.child_cancelled');
      expect(cascaded.map((e) => (e.type === 'async.child_cancelled' ? e.status : '')).sort()).toEqual([
        'cancelled',
        'cancelled',
        'cancelled',
      ]);
      if (!backend.shared) return;
      // Every step ran in the worker processes.
      const pids = new Set(lines(s.log).map((line) => line.split(' ')[0]));
      expect([...pids].every((pid) => s.workers.some((w) => String(w.pid) === pid))).toBe(true);
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'a parent queued between its jobs is cancelled by the operator: its children in the workers first',
    async () => {
      const s = await scenario();
      const started = await s.runtime.engine.start(s.reactors.retrying, {});
      await until(
        async () =>
          entries(s.log).filter((e) => e === 'child.holding').length === 3 &&
          (await s.runtime.engine.result(started.executionId))?.status === 'queued',
        WAIT_MS,
        '3 children holding, the parent waiting for its retry',
      );
      const cancelled = await s.runtime.engine.cancel(started.executionId); // rolled back in this process
      expect(cancelled.status).toBe('cancelled');
      for (const c of ['c1', 'c2', 'c3'])
        expect(await s.runtime.engine.result(`${started.executionId}~${c}`)).toMatchObject({
          status: 'cancelled',
          reason: `its parent ${started.executionId} was cancelled`,
        });
      expectChildrenFirst(entries(s.log));
    },
    TEST_TIMEOUT_MS,
  );

  test(
    "the parent's deadline cascades the same way",
    async () => {
      const s = await scenario();
      const started = await s.runtime.engine.start(s.reactors.deadlined, {});
      await until(() => holding(s.log), WAIT_MS, 'parent and 3 children holding');
      const done = await s.runtime.engine.wait(started.executionId, { timeoutMs: WAIT_MS, pollMs: 20 });
      expect(done).toMatchObject({ status: 'cancelled', cause: { code: 'deadline_exceeded' } });
      for (const c of ['c1', 'c2', 'c3'])
        expect(
          await s.runtime.engine.wait(`${started.executionId}~${c}`, { timeoutMs: WAIT_MS, pollMs: 20 }),
        ).toMatchObject({ status: 'cancelled' });
      expectChildrenFirst(entries(s.log));
    },
    TEST_TIMEOUT_MS,
  );
});
