/**
 * What P9 and its worker processes share: the child config, the sleeping reactor, the lines the
 * children print.
 *
 * @module
 */
import { reactor, type AnyReactorDefinition } from '../../src/index.js';

/** How long each execution sleeps (and how far each anchor job is delayed), ms. */
export const NAP_MS = 2_000;

/** The JSON config of a P9 child. */
export interface P9ChildConfig {
  readonly url: string;
  /** Key prefix of the ts-reactor runtime, and the BullMQ prefix of the anchor queue. */
  readonly prefix: string;
  /** The plain BullMQ queue of the anchor's delayed jobs. */
  readonly anchorQueue: string;
  /** Concurrency of both workers of the child (ts-reactor's and the anchor's). */
  readonly concurrency: number;
}

/**
 * A line a P9 child prints per observation: `woke` (a `step.woke` event), `done` (`run.completed`),
 * `job` (an anchor job's processor started). `late` is the observed engine-clock time (ms,
 * `Date.now()` of the child) minus the intended time: `wakeAt` for the subject, the job's
 * `timestamp + delay` for the anchor; `due` is that intended time.
 */
export interface P9Line {
  readonly p9: 'woke' | 'done' | 'job';
  readonly id: string;
  readonly late: number;
  readonly due: number;
}

/** The subject: a 2 s sleep, then one step after it. */
export function napper(): AnyReactorDefinition {
  return reactor('p9-nap')
    .sleep('nap', { for: NAP_MS })
    .step('after', { waitFor: ['nap'], run: () => 1 })
    .build();
}
