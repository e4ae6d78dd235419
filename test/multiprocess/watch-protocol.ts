/** What `watch.test.ts` and its worker process (`watch-worker-process.ts`) share: the reactor and the config. */
import { z } from 'zod';
import { reactor, type StepContext } from '../../src/index.js';
import type { MatrixBackendName, ServerAddress } from '../support/backend-recipes.js';

/** The JSON argument of a worker process. */
export interface WatchWorkerConfig {
  readonly backend: MatrixBackendName;
  readonly address: ServerAddress;
  readonly namespace: string;
}

/** A step reporting progress, an interrupt the test resumes, a last step reporting again; all in workers. */
export const watched = reactor('mp-watched')
  .input({ rows: z.number() })
  .step('load', {
    args: ($) => ({ rows: $.input('rows') }),
    run: ({ rows }, ctx: StepContext<{ done: number; total: number }>) => {
      for (let done = 1; done <= rows; done++) ctx.progress({ done, total: rows });
      return rows;
    },
  })
  .interrupt('approve', { waitFor: ['load'], payload: { ok: z.boolean() } })
  .step('finish', {
    waitFor: ['approve'],
    run: (_args, ctx: StepContext<string>) => {
      ctx.progress(`finishing in ${String(process.pid)}`);
      return process.pid;
    },
  })
  .background('all')
  .returns('finish');
