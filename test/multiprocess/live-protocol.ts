/**
 * What `test/web/browser-live.test.ts` and its worker process (`reactor-worker-process.ts`) share:
 * the reactor. The `work` step reports progress `done` of `total`, then waits
 * until the test creates the file `after-<done>` in the execution's gate directory: the test
 * decides when the step goes on, nothing waits for a time.
 */
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { reactor, type StepContext } from '../../src/index.js';

/** Resolves once `path` exists (checked every 25 ms). */
async function untilExists(path: string): Promise<void> {
  for (;;) {
    try {
      await access(path);
      return;
    } catch {
      await sleep(25);
    }
  }
}

/** The gate file the `work` step waits for after reporting `done`. */
export const gateFile = (gates: string, done: number): string => join(gates, `after-${String(done)}`);

/** `prepare`, then `work` (progress 1..total, each held at a gate the test opens), then `finish`. */
export const live = reactor('mp-live')
  .input({ gates: z.string(), total: z.number() })
  .step('prepare', { run: () => 'ready' })
  .step('work', {
    waitFor: ['prepare'],
    args: ($) => ({ gates: $.input('gates'), total: $.input('total') }),
    run: async ({ gates, total }, ctx: StepContext<{ done: number; total: number }>) => {
      for (let done = 1; done <= total; done++) {
        ctx.progress({ done, total });
        await untilExists(gateFile(gates, done));
      }
      return total;
    },
  })
  .step('finish', { waitFor: ['work'], run: () => process.pid })
  .returns('finish');
