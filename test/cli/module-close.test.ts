/**
 * A module's `close()`: awaited, bounded, its failure reported rather than thrown; and checked
 * when the module is read (a `close` that is not a function is refused, naming it).
 */
import { describe, expect, test } from 'vitest';
import { closeModule, closeWarning } from '../../src/cli/module-close.js';
import { readWorkerModule, WorkerModuleError } from '../../src/cli/worker-module.js';
import { defineWorker } from '../../src/bullmq.js';

describe('closeModule', () => {
  test('no close(): nothing to do', async () => {
    expect(await closeModule(undefined)).toEqual({ kind: 'none' });
    expect(await closeModule({})).toEqual({ kind: 'none' });
  });

  test('awaits the promise close() returns', async () => {
    let closed = false;
    const outcome = await closeModule({
      close: async () => {
        await new Promise((r) => setImmediate(r));
        closed = true;
      },
    });
    expect(outcome).toEqual({ kind: 'closed' });
    expect(closed).toBe(true);
    expect(closeWarning(outcome)).toBeUndefined();
  });

  test('a close() that throws or rejects is reported, not thrown', async () => {
    const threw = await closeModule({
      close: () => {
        throw new Error('pool busy');
      },
    });
    expect(threw).toEqual({ kind: 'failed', message: 'pool busy' });
    expect(closeWarning(threw)).toBe("the module's close() threw: pool busy");
    expect(await closeModule({ close: () => Promise.reject(new Error('gone')) })).toEqual({
      kind: 'failed',
      message: 'gone',
    });
  });

  test('a close() that never settles is left behind once the bound has passed', async () => {
    const outcome = await closeModule({ close: () => new Promise(() => undefined) }, 20);
    expect(outcome).toEqual({ kind: 'timed_out', timeoutMs: 20 });
    expect(closeWarning(outcome)).toBe("the module's close() did not settle within 20 ms; going on without it");
  });
});

describe('the close field of a worker module', () => {
  test('read from defineWorker or a named export; a close that is not a function is refused', () => {
    const close = (): void => undefined;
    expect(readWorkerModule({ default: defineWorker({ close }) }).close).toBe(close);
    expect(readWorkerModule({ close }).close).toBe(close);
    expect(() => readWorkerModule({ close: 'later' })).toThrow(WorkerModuleError);
    expect(() => readWorkerModule({ close: 'later' })).toThrow(/^close must be a function/);
  });
});
