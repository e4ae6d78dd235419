/**
 * Step timeouts in a worker (docs/time.md, docs/decisions/075), on every backend of the matrix
 * in real time: a hung body times out per attempt and the step is compensated, the
 * error survives the record as its own class; a redelivered job whose recorded attempt is past its
 * deadline fails it at once without running the body again.
 */
import { expect, test } from 'vitest';
import { StepTimeoutError, reactor, type ReactorEvent } from '../../src/index.js';
import { describeOnBackends } from '../support/backend-matrix.js';

const never = (): Promise<never> => new Promise<never>(() => undefined);
const timedOut = (trace: readonly ReactorEvent[]) =>
  trace.filter((e): e is Extract<ReactorEvent, { type: 'step.timed_out' }> => e.type === 'step.timed_out');

describeOnBackends('step timeouts in a worker', (backend) => {
  test('a hung body times out on each attempt, then the step fails and is compensated; the error keeps its class', async () => {
    const compensated: Error[] = [];
    const def = reactor('timeout-worker-hung')
      .step('slow', {
        timeout: 200,
        retry: { maxAttempts: 2, backoff: 'fixed', baseDelay: 10 },
        run: never,
        compensate: (error) => void compensated.push(error),
      })
      .background('all')
      .build();
    const runtime = backend.runtime({ reactors: [def] });
    runtime.startWorker({ concurrency: 2 });
    const started = await runtime.engine.start(def, {});
    const done = await runtime.engine.wait(started.executionId, { timeoutMs: 10_000, pollMs: 20 });
    expect(done?.status).toBe('failed');
    const error = done?.status === 'failed' ? done.error : undefined;
    expect(error).toBeInstanceOf(StepTimeoutError);
    expect((error as StepTimeoutError).details).toEqual({ step: 'slow', attempt: 2, timeoutMs: 200 });
    expect(compensated).toHaveLength(1);
    expect(compensated[0]).toBeInstanceOf(StepTimeoutError);
    expect(timedOut(done?.trace ?? []).map((e) => [e.attempt, e.ignoredSignal])).toEqual([
      [1, true],
      [2, true],
    ]);
    const record = await runtime.engine.store.get(started.executionId);
    expect(record?.steps.slow).toMatchObject({ status: 'failed', attempts: 2 });
  });

  test('a redelivered job resumes the recorded attempt: past its deadline it fails at once, the body not run again', async () => {
    let bodies = 0;
    const def = reactor('timeout-worker-redelivered')
      .step('slow', {
        timeout: '1s',
        run: () => {
          bodies++;
          return never();
        },
      })
      .background('all')
      .build();
    const runtime = backend.runtime({ reactors: [def] });
    const started = await runtime.engine.start(def, {});
    // As a worker that died mid-attempt left it, after a checkpoint carried the attempt's start.
    const record = (await runtime.engine.store.get(started.executionId))!;
    await runtime.engine.store.save({
      ...record,
      steps: { slow: { status: 'running', attempts: 1, attemptStartedAt: Date.now() - 5_000 } },
    });
    runtime.startWorker({ concurrency: 1 });
    const done = await runtime.engine.wait(started.executionId, { timeoutMs: 10_000, pollMs: 20 });
    expect(done?.status === 'failed' && done.error).toBeInstanceOf(StepTimeoutError);
    expect(bodies).toBe(0);
    const trace = done?.trace ?? [];
    expect(trace.find((e) => e.type === 'step.started')).toMatchObject({ attempt: 1 });
    expect(timedOut(trace).map((e) => [e.attempt, e.ignoredSignal])).toEqual([[1, false]]);
  });
});
