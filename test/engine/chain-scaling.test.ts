/**
 * A linear chain costs the same per step at 100 steps as at 2,000: the work the engine does per
 * step is counted (never timed) — reads of the nodes' dependency lists by the scheduler, and the
 * step entries written by checkpoints.
 */
import { describe, expect, test } from 'vitest';
import { reactor, type AnyReactorDefinition } from '../../src/index.js';
import { MemoryStore } from '../../src/storage/memory/store.js';
import { createTestEngine } from '../../src/testing/index.js';
import type { ExecutionRecord } from '../../src/ports/store.js';

type Builder = { step(name: string, options: object): Builder; build(): AnyReactorDefinition };

/** A chain of `n` steps, step i reading the result of step i − 1 (or waiting for it). */
function chain(name: string, n: number, link: 'args' | 'waitFor'): AnyReactorDefinition {
  let builder = reactor(name).step('s0', { run: () => 0 }) as unknown as Builder;
  for (let i = 1; i < n; i++) {
    builder =
      link === 'args'
        ? builder.step(`s${i}`, {
            args: ($: { result(step: string): unknown }) => ({ p: $.result(`s${i - 1}`) }),
            run: ({ p }: { p: number }) => p + 1,
          })
        : builder.step(`s${i}`, { waitFor: [`s${i - 1}`], run: () => i });
  }
  return builder.build();
}

/** The definition with every node's `dependsOn` counting the reads made of it. */
function counted(definition: AnyReactorDefinition): { definition: AnyReactorDefinition; reads: () => number } {
  let reads = 0;
  const nodes = definition.nodes.map((node) => ({
    ...node,
    dependsOn: new Proxy(node.dependsOn, {
      get(target, key, receiver) {
        reads++;
        return Reflect.get(target, key, receiver) as unknown;
      },
    }),
  }));
  return { definition: { ...definition, nodes } as AnyReactorDefinition, reads: () => reads };
}

describe('a linear chain does bounded work per step', () => {
  for (const link of ['args', 'waitFor'] as const) {
    test(`the scheduler reads dependency lists a bounded number of times per step (${link})`, async () => {
      const perStep: number[] = [];
      for (const n of [100, 2_000]) {
        const { definition, reads } = counted(chain(`chain-${link}-${n}`, n, link));
        const result = await createTestEngine().run(definition, {});
        expect(result.status).toBe('completed');
        perStep.push(reads() / n);
      }
      // A scan of every waiting node on each settle reads ~n/2 lists per step (1,000 at 2,000 steps).
      for (const reads of perStep) expect(reads).toBeLessThanOrEqual(8);
      expect(perStep[1]!).toBeLessThanOrEqual(perStep[0]! * 1.5);
    });
  }

  test('checkpoints write a bounded number of step entries per step (default interval)', async () => {
    const perStep: number[] = [];
    for (const n of [100, 2_000]) {
      const store = new MemoryStore();
      let entries = 0;
      const save = store.save.bind(store);
      store.save = (record: ExecutionRecord) => {
        entries += Object.keys(record.steps).length;
        return save(record);
      };
      const result = await createTestEngine({ store }).run(chain(`chain-saves-${n}`, n, 'args'), {});
      expect(result.status).toBe('completed');
      perStep.push(entries / n);
    }
    // A full record per step writes ~n/2 entries per step; within one interval the record is written
    // when the run starts and when it ends.
    for (const entries of perStep) expect(entries).toBeLessThanOrEqual(3);
  });
});
