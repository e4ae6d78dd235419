/**
 * What `schedules.test.ts` and its worker processes (`schedule-worker-process.ts`) share: the
 * scheduled reactor and the computed input that carries each tick's time.
 */
import { z } from 'zod';
import { reactor } from '../../src/index.js';
import type { ScheduleInputFn } from '../../src/schedules/index.js';

/** The reactor each tick starts: it returns the tick time it was given. */
export const tickReport = reactor('tick-report')
  .input({ tick: z.string() })
  .step('echo', { args: ($) => ({ tick: $.input('tick') }), run: ({ tick }) => ({ tick, pid: process.pid }) })
  .returns('echo');

/** The computed inputs of every process (the upserting one names only inputs it knows). */
export const scheduleInputs: Readonly<Record<string, ScheduleInputFn>> = {
  tickTime: (tick) => ({ tick: tick.toISOString() }),
};

/** The JSON argument of a worker process. */
export interface ScheduleWorkerConfig {
  readonly url: string;
  readonly prefix: string;
}
