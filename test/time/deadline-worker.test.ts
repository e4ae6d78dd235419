/**
 * A reactor's deadline in a worker (docs/time.md "Deadlines", docs/decisions/081), on every
 * backend of the matrix in real time: an execution waiting for a retry's backoff
 * when its deadline passes is rolled back by its deadline job and ends `cancelled`, its cause a
 * `DeadlineExceededError` rebuilt from the record; a redelivered job counts from `createdAt`.
 */
import { expect, test } from 'vitest';
import { DeadlineExceededError, reactor } from '../../src/index.js';
import { describeOnBackends } from '../support/backend-matrix.js';

describeOnBackends('a reactor deadline in a worker', (backend) => {
  test('the deadline passes during a retry delay: the deadline job rolls the execution back', async () => {
    const undone: string[] = [];
    let attempts = 0;
    // The deadline leaves a busy machine ample time to run `reserve` and the first attempt of
    // `flaky`; the retry's backoff (ten minutes) is far past it, so only the deadline job can end the run.
    const def = reactor('deadline-worker-retry', { deadline: '20s' })
      .step('reserve', { run: () => 'r1', undo: () => void undone.push('reserve') })
      .step('flaky', {
        waitFor: ['reserve'],
        retry: { maxAttempts: 5, backoff: 'fixed', baseDelay: '10m' },
        run: () => {
          attempts++;
          throw new Error('down');
        },
      })
      .background('all')
      .build();
    const runtime = backend.runtime({ reactors: [def] });
    runtime.startWorker({ concurrency: 2 });
    const started = await runtime.engine.start(def, {});
    const done = await runtime.engine.wait(started.executionId, { timeoutMs: 180_000, pollMs: 20 });
    expect(done?.status).toBe('cancelled');
    const cause = done?.status === 'cancelled' ? done.cause : undefined;
    expect(cause).toBeInstanceOf(DeadlineExceededError);
    expect((cause as DeadlineExceededError).details).toMatchObject({
      executionId: started.executionId,
      deadlineMs: 20_000,
    });
    expect(undone).toEqual(['reserve']);
    expect(attempts).toBe(1);
    expect(done?.trace.some((e) => e.type === 'run.deadline_exceeded')).toBe(true);
    const record = await runtime.engine.store.get(started.executionId);
    expect(record?.cancelCause?.code).toBe('deadline_exceeded');
  }, 300_000);

  test('a redelivered job counts the deadline from the record createdAt: past it, nothing runs', async () => {
    let bodies = 0;
    const def = reactor('deadline-worker-redelivered', { deadline: '10s' })
      .step('a', { run: () => void bodies++ })
      .background('all')
      .build();
    const runtime = backend.runtime({ reactors: [def] });
    const started = await runtime.engine.start(def, {});
    // As a worker that died mid-run left it, created 20 s ago.
    const record = (await runtime.engine.store.get(started.executionId))!;
    await runtime.engine.store.save({ ...record, status: 'running', createdAt: Date.now() - 20_000 });
    runtime.startWorker({ concurrency: 1 });
    const done = await runtime.engine.wait(started.executionId, { timeoutMs: 120_000, pollMs: 20 });
    expect(done?.status === 'cancelled' && done.cause).toBeInstanceOf(DeadlineExceededError);
    expect(bodies).toBe(0);
  }, 180_000);
});
