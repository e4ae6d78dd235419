/**
 * What P13 and its worker processes share: the child config and the reactor (a step lock over
 * many keys).
 *
 * @module
 */
import { mkdirSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { reactor, type AnyReactorDefinition } from '../../src/index.js';
import type { RedisClusterTarget } from '../../src/storage/redis/connection.js';

/** The JSON config of a P13 worker process. */
export interface P13ChildConfig {
  /** A single server's URL, or a cluster's startup nodes. */
  readonly url?: string;
  readonly cluster?: RedisClusterTarget;
  readonly prefix: string;
  readonly concurrency: number;
  /** How long the locked step's section takes, ms. */
  readonly sectionMs: number;
  /**
   * Short liveness and stall bounds, so a job whose master was killed is found again within
   * seconds (the failover target).
   */
  readonly fastRecovery?: boolean;
  /**
   * A directory all the workers share: a section holds `<guardDir>/<key>` while it runs, so two
   * holders of one key at once are seen without comparing clocks (`mkdir` fails for the second).
   */
  readonly guardDir?: string;
}

/**
 * The reactor: an unlocked step, then a section under a lock on the execution's key. With a
 * `guardDir`, `onClash` is called for a section that started while another of its key ran.
 */
export function p13Reactor(
  onSection: (key: string, executionId: string, start: number, end: number) => void = () => undefined,
  guardDir?: string,
  onClash: (key: string, executionId: string) => void = () => undefined,
) {
  return reactor('p13-step-lock')
    .input({ key: z.string(), sectionMs: z.number() })
    .step('prepare', { run: () => 1 })
    .step('locked', {
      waitFor: ['prepare'],
      lock: { key: ({ key }) => `p13:${key}`, ttl: '30s' },
      run: async ({ key, sectionMs }, ctx) => {
        const guard = guardDir === undefined ? undefined : join(guardDir, key);
        let mine = false;
        if (guard !== undefined) {
          try {
            mkdirSync(guard);
            mine = true;
          } catch {
            onClash(key, ctx.executionId); // another holder's section of this key is running
          }
        }
        const start = performance.timeOrigin + performance.now();
        await new Promise((resolve) => setTimeout(resolve, sectionMs));
        if (mine) rmdirSync(guard!);
        onSection(key, ctx.executionId, start, performance.timeOrigin + performance.now());
        return 1;
      },
    })
    .returns('locked') as unknown as AnyReactorDefinition;
}
