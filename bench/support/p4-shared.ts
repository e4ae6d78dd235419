/**
 * What P4 and its child processes share: the child config and the contended reactor.
 *
 * @module
 */
import { reactor, type AnyReactorDefinition } from '../../src/index.js';
import { now, section } from './children.js';

/** The JSON config of a P4 child. */
export interface P4ChildConfig {
  readonly mode: 'worker' | 'mutex';
  readonly url: string;
  readonly prefix: string;
  /** The one contended key. */
  readonly key: string;
  readonly sectionMs: number;
  /** Worker concurrency (mode `worker`) or contenders in this process (mode `mutex`). */
  readonly concurrency: number;
  readonly parkFallbackMs: number;
  /** Mode `worker`: the coordinator's in-process lock hand-over (docs/decisions/037); default on. */
  readonly lockHandOff?: boolean;
}

/** A reactor with a reactor-level lock on one key and one step: the critical section. */
export function contendedReactor(key: string, sectionMs: number, onSection: (executionId: string, start: number, end: number) => void = () => undefined): AnyReactorDefinition {
  return reactor('p4-contended')
    .withLock({ key: () => key, ttl: '30s', wait: 0 })
    .step('section', {
      run: async (_args, ctx) => {
        const start = now();
        await section(sectionMs);
        onSection(ctx.executionId, start, now());
        return 1;
      },
    })
    .returns('section');
}
