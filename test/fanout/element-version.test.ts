/**
 * A fan-out map's element records carry the definition stamp (fingerprint, version) of the
 * execution that created them (docs/decisions/082), so a worker without that definition leaves
 * an element's job like any other job of the execution, instead of running it on whatever
 * definition of that name it has.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineStep, MemoryFanOutLedger, reactor, type AnyReactorDefinition } from '../../src/index.js';
import { executionJob } from '../../src/engine/execution/next-job.js';
import type { Worker } from '../../src/queue/worker.js';
import { eventsOf, manualEngine, until, untilStatus } from '../background/helpers.js';

const ran: string[] = [];

/** v1: a fan-out map over three items; v2 renames the map (another shape, another fingerprint). */
function flow(version: '1' | '2'): AnyReactorDefinition {
  return reactor('fan-flow', { version })
    .input({ items: z.array(z.number()) })
    .map(version === '1' ? 'items' : 'items2', {
      source: ($) => $.input('items'),
      each: defineStep({ input: { n: z.number() }, run: ({ n }) => (ran.push(`${n}@${version}`), n * 10) }),
      args: (n) => ({ n }),
      fanOut: { batchSize: 3 },
    })
    .build();
}

const workers: Worker[] = [];
afterEach(async () => {
  for (const w of workers.splice(0)) await w.close().catch(() => undefined);
  ran.length = 0;
});

describe('fan-out elements and versioned definitions', () => {
  it('element records carry their map’s fingerprint and version; a worker without that definition leaves an element’s job', async () => {
    const fanOut = new MemoryFanOutLedger();
    const first = manualEngine({
      fanOut,
      reactors: [flow('1')],
      background: { parkFallbackMs: 2_000, workerWaitMs: 0 },
    });
    const w1 = first.startWorker();
    const started = await first.engine.start(flow('1'), { items: [1, 2, 3] });
    await untilStatus(first.engine, started.executionId, 'completed');
    await w1.close();
    const elementId = `${started.executionId}/items[1]`;
    const element = (await first.store.get(elementId))!;
    expect(element.fingerprint).toBe(flow('1').fingerprint);
    expect(element.version).toBe('1');

    // As if the element's job were still to run (its parent's worker stopped before it).
    const { value: _value, ...unfinished } = element;
    await first.store.save({ ...unfinished, status: 'pending', steps: {} });

    const only2 = manualEngine({
      fanOut,
      store: first.store,
      coordinator: first.coordinator,
      reactors: [flow('2')],
      background: { parkFallbackMs: 40, workerWaitMs: 0 },
    });
    workers.push(only2.startWorker());
    await only2.memory.queue.enqueue(executionJob(elementId, 'fan-flow'), { jobId: `${elementId}:test` });
    await until(() => eventsOf(only2.events, 'run.version_unavailable').length > 0, 3_000, 'a version wait');
    expect(eventsOf(only2.events, 'run.version_unavailable')[0]).toMatchObject({
      executionId: elementId,
      fingerprint: element.fingerprint,
      version: '1',
    });
    expect(ran.filter((r) => r.endsWith('@2'))).toEqual([]);
    expect((await first.store.get(elementId))?.background?.waitingForVersion).toMatchObject({ version: '1' });
  });
});
