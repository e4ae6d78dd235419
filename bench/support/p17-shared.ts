/**
 * What P17 and its worker processes share: the child config and the 3-step reactor.
 *
 * @module
 */
import { reactor, type AnyReactorDefinition } from '../../src/index.js';

/** The JSON config of a P17 child. */
export interface P17ChildConfig {
  /** `reactor`: a ts-reactor worker on `createPostgresRuntime`; `raw`: a BullMQ 6 worker with an empty processor. */
  readonly mode: 'reactor' | 'raw';
  /** The database of this side. */
  readonly url: string;
  /** Jobs at once in this process. */
  readonly concurrency: number;
  /** Mode `raw`: the BullMQ queue name. */
  readonly queue: string;
}

/** The uncontended 3-step reactor (each step reads the previous step's result), as P7's. */
export function threeSteps(): AnyReactorDefinition {
  return reactor('p17-three-steps')
    .step('a', { run: () => 1 })
    .step('b', { args: ($) => ({ a: $.result('a') }), run: ({ a }) => a + 1 })
    .step('c', { args: ($) => ({ b: $.result('b') }), run: ({ b }) => b + 1 })
    .returns('c');
}
