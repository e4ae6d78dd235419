/**
 * Versioned definitions in workers on the server backends of the matrix (decision 082): a v1
 * execution parked in a step's retry delay is left alone by a worker with only v2 (waiting for
 * version 1), and completed on v1 by a worker with both versions registered.
 */
import { expect, test } from 'vitest';
import { reactor, type AnyReactorDefinition, type ReactorEvent } from '../../src/index.js';
import { describeOnBackends } from '../support/backend-matrix.js';
import { until } from './helpers.js';

// Three runtimes in turn over one namespace: the record must outlive the runtime that started it,
// which a memory backend (one per runtime) does not; versions.test.ts covers the memory backend.
describeOnBackends(
  'versioned definitions in workers',
  (backend) => {
    const calls: string[] = [];
    let bFailures = 1;

    const v1: AnyReactorDefinition = reactor('flow-versions', { version: '1' })
      .step('a', { run: () => (calls.push('a@1'), 1) })
      .step('b', {
        waitFor: ['a'],
        retry: { maxAttempts: 3, baseDelay: 600 },
        run: () => {
          calls.push('b@1');
          if (bFailures-- > 0) throw new Error('flaky');
          return 2;
        },
      })
      .build();

    const v2: AnyReactorDefinition = reactor('flow-versions', { version: '2' })
      .step('a2', { run: () => (calls.push('a2@2'), 1) })
      .step('b', { waitFor: ['a2'], run: () => (calls.push('b@2'), 2) })
      .build();

    test('a v2-only worker leaves a v1 execution waiting for version 1; a worker with both completes it on v1', async () => {
      const first = backend.runtime({ background: { parkFallbackMs: 200 }, reactors: [v1] });
      const options = { background: { parkFallbackMs: 200 }, namespace: first.namespace };
      first.startWorker({ concurrency: 2 });
      const started = await first.engine.start(v1, {});
      const id = started.executionId;
      await until(
        async () => (await first.engine.store.get(id))?.steps['b']?.status === 'retrying',
        10_000,
        'b retrying',
      );
      await first.close();

      const only2 = backend.runtime({ ...options, reactors: [v2] });
      const events: ReactorEvent[] = [];
      only2.engine.subscribe((e) => events.push(e));
      only2.startWorker({ concurrency: 2 });
      await until(() => events.some((e) => e.type === 'run.version_unavailable'), 10_000, 'a version wait');
      const waiting = await only2.engine.store.get(id);
      expect(waiting?.status).toBe('pending');
      expect(waiting?.steps['b']?.attempts).toBe(1);
      expect(waiting?.background?.waitingForVersion).toMatchObject({ fingerprint: v1.fingerprint, version: '1' });
      await only2.close();

      const both = backend.runtime({ ...options, reactors: [v1, v2] });
      both.startWorker({ concurrency: 2 });
      const done = await both.engine.wait(id, { timeoutMs: 15_000, pollMs: 20 });
      expect(done.status).toBe('completed');
      const record = await both.engine.store.get(id);
      expect(record?.fingerprint).toBe(v1.fingerprint);
      expect(record?.background?.waitingForVersion).toBeUndefined();
      expect(calls).toEqual(['a@1', 'b@1', 'b@1']);
    }, 40_000);
  },
  { backends: ['redis', 'postgres'] },
);
