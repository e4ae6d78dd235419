/**
 * A cancel from a second runtime while a worker runs an execution's first step and no checkpoint
 * has said `running` yet (the default checkpoint interval), on memory and Redis (decision 159).
 * With the job holding its lease, the cancel waits for it and it undoes what ran; with the lease
 * gone mid-body (its worker lost it), the cancel is a request, and the job that takes over (a
 * recovery sweep's) records the attempt and compensates it. The step's body blocks on a gate.
 */
import { expect, test } from 'vitest';
import { reactor } from '../../src/index.js';
import { livenessKey } from '../../src/engine/model/keys.js';
import { describeOnBackends, type MatrixBackend } from '../support/backend-matrix.js';
import { gate } from '../background/helpers.js';

/** How long an outcome is waited for: a deadline for a loaded machine, not a bound. */
const WAIT_MS = 30_000;

function blocking(name: string, log: string[], inStep: { open: () => void }, release: Promise<void>) {
  return reactor(name)
    .step('a', {
      run: async () => {
        log.push('run a');
        inStep.open();
        await release;
        return 'a';
      },
      undo: () => void log.push('undo a'),
      compensate: () => void log.push('compensate a'),
    })
    .build();
}

describeOnBackends(
  'cancel of a first step no checkpoint recorded',
  (backend: MatrixBackend) => {
    /**
     * A worker's runtime and, on a server backend, an operator's over the same namespace. With
     * `shortLease`, a lease of 1 s: the recovery sweep (every two lease lengths) takes over soon
     * after a lost one. Without it, the default lease, which a busy machine cannot make lapse
     * while the job still holds it.
     */
    function runtimes(definition: ReturnType<typeof blocking>, shortLease: boolean) {
      const options = { reactors: [definition], ...(shortLease ? { background: { livenessTtlMs: 1_000 } } : {}) };
      const worker = backend.runtime(options);
      const operator = backend.shared ? backend.runtime({ ...options, namespace: worker.namespace }) : worker;
      return { worker, operator };
    }

    test(
      'the job holds its lease: the cancel waits for it, and it undoes the step',
      async () => {
        const log: string[] = [];
        const inStep = gate();
        const release = gate();
        const definition = blocking(`unrecorded-held-${backend.name}`, log, inStep, release.promise);
        const { worker, operator } = runtimes(definition, false);
        worker.startWorker({ concurrency: 1 });
        const { executionId } = await worker.engine.start(definition, {});
        await inStep.promise;
        expect((await worker.backend.store.get(executionId))!.status).toBe('pending');
        const cancelling = operator.engine.cancel(executionId, { reason: 'operator' });
        await expect
          .poll(() => worker.backend.coordinator.periodIsMarked(`cancel:${executionId}`, 'requested'), {
            timeout: WAIT_MS,
          })
          .toBe(true);
        release.open();
        // The call waits for the job up to 10 s (decision 144): on a loaded machine it may answer
        // first that the cancel is requested. Either way the job ends the execution cancelled.
        const answer = await cancelling;
        expect(['cancelled', 'running']).toContain(answer.status);
        await expect
          .poll(async () => (await operator.engine.result(executionId))?.status, { timeout: WAIT_MS })
          .toBe('cancelled');
        expect(await operator.engine.result(executionId)).toMatchObject({ status: 'cancelled', reason: 'operator' });
        const record = (await worker.backend.store.get(executionId))!;
        expect(record.steps.a).toMatchObject({ attempts: 1 });
        expect(log).toEqual(['run a', 'undo a']);
      },
      2 * WAIT_MS,
    );

    test(
      'the job lost its lease mid-body: the cancel is a request; the job that takes over compensates and counts the step',
      async () => {
        const log: string[] = [];
        const inStep = gate();
        const release = gate();
        const definition = blocking(`unrecorded-lost-${backend.name}`, log, inStep, release.promise);
        const { worker, operator } = runtimes(definition, true);
        worker.startWorker({ concurrency: 1 });
        const { executionId } = await worker.engine.start(definition, {});
        await inStep.promise;
        // The job's lease is gone (as when its worker freezes past it); its body still runs.
        const coordinator = worker.backend.coordinator;
        const lease = await coordinator.lockState(livenessKey(executionId));
        expect(lease).toBeDefined();
        await coordinator.lockRelease(livenessKey(executionId), lease!.holder.owner);
        expect((await worker.backend.store.get(executionId))!).toMatchObject({ status: 'pending', steps: {} });

        // Before: `cancelled` at once, rolled back as a start that never began.
        expect(await operator.engine.cancel(executionId, { reason: 'operator' })).toMatchObject({
          status: 'running',
        });
        release.open(); // its next write is refused: it stops without writing
        // A recovery sweep (the workers' timer on Redis; asked for here on memory) finds it stranded, and its job takes over.
        await expect
          .poll(
            async () => {
              await operator.engine.sweep();
              return (await operator.engine.result(executionId))?.status;
            },
            { timeout: WAIT_MS, interval: 50 },
          )
          .toBe('cancelled');
        expect(await operator.engine.result(executionId)).toMatchObject({ status: 'cancelled', reason: 'operator' });
        const record = (await worker.backend.store.get(executionId))!;
        expect(record.steps.a).toMatchObject({ attempts: 1 });
        expect(record.steps.a!.runs).toEqual([expect.objectContaining({ attempt: 1, outcome: 'may_have_run' })]);
        expect(log).toEqual(['run a', 'compensate a']);
      },
      2 * WAIT_MS,
    );
  },
  { backends: ['memory', 'redis', 'postgres'] },
);
