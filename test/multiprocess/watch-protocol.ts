/** What `watch.test.ts` and its worker process (`reactor-worker-process.ts`) share: the reactor. */
import { z } from 'zod';
import { reactor, type StepContext } from '../../src/index.js';

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
