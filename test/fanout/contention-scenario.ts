/**
 * Reactors of the fan-out contention tests (memory and Redis): a map whose element step takes
 * one lock, and another execution holding that lock.
 */
import { z } from 'zod';
import { defineStep, MemoryFanOutLedger, reactor, type ExecutionRecord } from '../../src/index.js';
import { gate as gateOpen, manualEngine, until, type gate } from '../background/helpers.js';

/** A key unique to one test. */
export const fresh = (name: string): string => `${name}:${Math.random().toString(36).slice(2, 10)}`;

/** `items` (one element per number, each taking the lock `key`) → `sum`. */
export function lockedMap(key: string, log: string[], atomic: boolean) {
  const element = defineStep({
    input: { n: z.number().int() },
    lock: { key: () => key, wait: 0 },
    run: ({ n }) => (log.push(`run ${n}`), n * 10),
    compensate: (_error, { n }) => void log.push(`compensate ${n}`),
    undo: (_value, { n }) => void log.push(`undo ${n}`),
  });
  return reactor(atomic ? 'elem-locked-atomic' : 'elem-locked')
    .input({ ns: z.array(z.number().int()) })
    .map('items', {
      source: ($) => $.input('ns'),
      each: element,
      args: (n) => ({ n }),
      atomic,
      fanOut: { batchSize: 4 },
    })
    .step('sum', {
      args: ($) => ({ map: $.result('items') }),
      run: ({ map }) => ({ successes: map.successes, failures: map.failures.map((f) => f.index) }),
    })
    .returns('sum');
}

/** Another execution holding `key` until `leave` opens (its release wakes the key's waiters). */
export function holderOf(key: string, inside: ReturnType<typeof gate>, leave: ReturnType<typeof gate>) {
  return reactor('elem-holder')
    .withLock({ key: () => key })
    .step('hold', { run: async () => (inside.open(), await leave.promise, 'held') })
    .returns('hold');
}

/**
 * On the embedded backend: another execution holds `key` (until `leave` opens), then a map of
 * `ns` starts and its dispatched elements (the first `parked` of them) park on the key. The park
 * fallback is a minute away, so only a release's wake or an operator's action ends them in time.
 */
export async function parkedMapInMemory(name: string, atomic: boolean, ns: readonly number[], parked = ns.length) {
  const key = fresh(name);
  const log: string[] = [];
  const m = manualEngine({ fanOut: new MemoryFanOutLedger(), background: { parkFallbackMs: 60_000, workerWaitMs: 0 } });
  const worker = m.startWorker(8);
  const inside = gateOpen();
  const leave = gateOpen();
  const held = m.engine.run(holderOf(key, inside, leave), {});
  await inside.promise;
  const { executionId } = await m.engine.start(lockedMap(key, log, atomic), { ns: [...ns] });
  const ids = ns.map((_, i) => `${executionId}/items[${i}]`);
  const records = async (): Promise<(ExecutionRecord | undefined)[]> => Promise.all(ids.map((id) => m.store.get(id)));
  await until(async () => (await records()).slice(0, parked).every((r) => r?.status === 'parked'));
  return { key, log, m, worker, leave, held, executionId, records };
}
