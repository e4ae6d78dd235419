/**
 * `engine.watch` across processes on Redis and PostgreSQL (docs/progress.md, docs/decisions/138):
 * a worker process (`reactor-worker-process.ts`) runs the execution; this process runs no worker and
 * only watches. It sees the step's progress reported in the worker, drops its watch at the
 * execution's pause, resumes the execution, and continues from the last position it saw: the two
 * watches together are exactly the full replay (no gap, no repeat), the second ends after
 * `run.completed`, and the record keeps each step's newest progress.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, test } from 'vitest';
import type { WatchItem } from '../../src/index.js';
import { describeOnBackends } from '../support/backend-matrix.js';
import { CHILD_LINE_TIMEOUT_MS, spawnJsonChild } from '../support/json-child.js';
import { untilStatus } from '../background/helpers.js';
import type { ReactorWorkerConfig } from './reactor-worker-process.js';
import { watched } from './watch-protocol.js';

const WORKER = fileURLToPath(new URL('./reactor-worker-process.ts', import.meta.url));

async function collect(items: AsyncIterable<WatchItem>, until?: (item: WatchItem) => boolean): Promise<WatchItem[]> {
  const out: WatchItem[] = [];
  for await (const item of items) {
    out.push(item);
    if (until?.(item) === true) break;
  }
  return out;
}

describeOnBackends(
  'engine.watch across processes',
  (backend) => {
    const children = new Set<ChildProcess>();
    afterEach(() => {
      for (const child of children) child.kill('SIGKILL');
      children.clear();
    });

    test('a worker process runs it, this process watches, drops the watch and resumes from its position', async () => {
      const runtime = backend.runtime({ reactors: [watched] });
      const config: ReactorWorkerConfig = {
        backend: backend.name,
        address: backend.address(),
        namespace: runtime.namespace,
        reactor: 'watched',
      };
      const worker = spawnJsonChild(WORKER, config, children);
      const ready = await worker.line<{ readonly pid: number }>((v) => v.ready === true);
      const { executionId } = await runtime.engine.start(watched, { rows: 3 });

      const head = await collect(runtime.engine.watch(executionId), (item) => item.event.type === 'run.paused');
      expect(head.at(-1)?.event.type).toBe('run.paused');
      const loadProgress = head.filter((i) => i.event.type === 'step.progress').map((i) => i.event);
      expect(loadProgress.map((e) => ('data' in e ? e.data : undefined))).toEqual([
        { done: 1, total: 3 },
        { done: 2, total: 3 },
        { done: 3, total: 3 },
      ]);
      expect(loadProgress[0]).toMatchObject({ executionId, step: 'load', attempt: 1 });

      // The stream gets `run.paused` before the record says paused: resume once it does.
      await untilStatus(runtime.engine, executionId, 'paused', CHILD_LINE_TIMEOUT_MS);
      expect((await runtime.engine.resume(executionId, { ok: true })).status).toBe('queued');
      const rest = await collect(runtime.engine.watch(executionId, { from: head.at(-1)!.position }));
      expect(rest.at(-1)?.event.type).toBe('run.completed');
      expect(rest.find((i) => i.event.type === 'step.progress')?.event).toMatchObject({
        step: 'finish',
        data: `finishing in ${String(ready.pid)}`,
      });

      const all = await collect(runtime.engine.watch(executionId));
      expect(all).toEqual([...head, ...rest]);
      // The stream gets the terminal event before the record is written: wait for the result.
      expect((await runtime.engine.wait(executionId, { timeoutMs: 60_000 })).status).toBe('completed');
      const record = await runtime.backend.store.get(executionId);
      expect(record?.progress).toMatchObject({
        load: { attempt: 1, data: { done: 3, total: 3 } },
        finish: { attempt: 1, data: `finishing in ${String(ready.pid)}` },
      });
    });
  },
  { backends: ['redis', 'postgres'] },
);
