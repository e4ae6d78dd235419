/**
 * `ctx.progress` and `engine.watch` on the memory backend (docs/progress.md): the watch yields an
 * execution's events with increasing positions and ends after its terminal event; it resumes
 * after a position without gaps or repeats; a finished execution is replayed; an unknown id is a
 * typed error; progress that is not JSON or too large is refused in the step and nothing is
 * published; the newest report of each step is on the record. Manual clock; nothing sleeps.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  createEmbeddedEngine,
  createEngine,
  ExecutionNotFoundError,
  MemoryStore,
  ProgressInvalidError,
  reactor,
  WatchUnavailableError,
  type EmbeddedEngine,
  type StepContext,
  type WatchItem,
} from '../../src/index.js';
import { ManualClock } from '../../src/testing/index.js';

/** A gate a step waits at until the test opens it. */
function gate(): { readonly wait: Promise<void>; open(): void } {
  let open = (): void => undefined;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

let gates = new Map<string, ReturnType<typeof gate>>();
const refused: string[] = [];

const importRows = reactor('watch-import')
  .input({ rows: z.number() })
  .step('load', {
    args: ($) => ({ rows: $.input('rows') }),
    run: async ({ rows }, ctx: StepContext<{ done: number; total: number }>) => {
      for (let done = 1; done <= rows; done++) ctx.progress({ done, total: rows });
      await gates.get(ctx.executionId)?.wait;
      return rows;
    },
  })
  .step('refusals', {
    args: ($) => ({ rows: $.result('load') }),
    run: (_args, ctx) => {
      for (const bad of [10n, { big: 'x'.repeat(17 * 1024) }, undefined]) {
        try {
          ctx.progress(bad);
        } catch (error) {
          if (error instanceof ProgressInvalidError) refused.push(error.details.reason);
        }
      }
      ctx.progress('done');
      return true;
    },
  })
  .returns('load');

const engines: EmbeddedEngine[] = [];
afterEach(async () => {
  for (const engine of engines.splice(0)) await engine.close();
  gates = new Map();
  refused.length = 0;
});

function embedded(): EmbeddedEngine {
  const engine = createEmbeddedEngine({ clock: new ManualClock(), reactors: [importRows] });
  engines.push(engine);
  return engine;
}

async function collect(items: AsyncIterable<WatchItem>, stopAfter = Infinity): Promise<WatchItem[]> {
  const out: WatchItem[] = [];
  for await (const item of items) {
    out.push(item);
    if (out.length >= stopAfter) break;
  }
  return out;
}

describe('engine.watch (memory)', () => {
  test('a live watch sees progress while the step runs, then every event, and ends after run.completed', async () => {
    const engine = embedded();
    const g = gate();
    const started = await engine.start(importRows, { rows: 3 });
    gates.set(started.executionId, g);
    const seen: WatchItem[] = [];
    const watching = (async () => {
      for await (const item of engine.watch(started.executionId)) {
        seen.push(item);
        // The step is still held at its gate when its last progress report arrives: release it then.
        if (item.event.type === 'step.progress' && item.event.step === 'load' && seen.length > 0) {
          const data = item.event.data as { done: number };
          if (data.done === 3) g.open();
        }
      }
    })();
    await watching;
    const types = seen.map((i) => i.event.type);
    expect(types.at(-1)).toBe('run.completed');
    const progress = seen.filter((i) => i.event.type === 'step.progress').map((i) => i.event);
    expect(progress.map((e) => ('data' in e ? e.data : undefined))).toEqual([
      { done: 1, total: 3 },
      { done: 2, total: 3 },
      { done: 3, total: 3 },
      'done',
    ]);
    expect(progress[0]).toMatchObject({ executionId: started.executionId, step: 'load', attempt: 1 });
    expect(refused).toEqual(['not_json', 'too_large', 'not_json']);
    const positions = seen.map((i) => i.position);
    expect([...positions].sort()).toEqual(positions);
    expect(new Set(positions).size).toBe(positions.length);
    // Progress is published, not traced; the newest report of each step is on the record.
    const record = await engine.store.get(started.executionId);
    expect(record?.trace?.some((e) => e.type === 'step.progress')).toBe(false);
    expect(record?.progress).toMatchObject({
      load: { attempt: 1, data: { done: 3, total: 3 } },
      refusals: { attempt: 1, data: 'done' },
    });
  });

  test('a watch dropped after a position continues from it with neither gap nor repeat', async () => {
    const engine = embedded();
    const { executionId } = await engine.run(importRows, { rows: 5 });
    const all = await collect(engine.watch(executionId));
    expect(all.at(-1)?.event.type).toBe('run.completed');
    for (const cut of [1, 4, all.length - 1]) {
      const head = await collect(engine.watch(executionId), cut);
      const rest = await collect(engine.watch(executionId, { from: head.at(-1)!.position }));
      expect([...head, ...rest]).toEqual(all);
    }
  });

  test('a finished execution is replayed, then the watch ends; watching from its last position yields nothing', async () => {
    const engine = embedded();
    const { executionId } = await engine.run(importRows, { rows: 1 });
    const all = await collect(engine.watch(executionId));
    expect(all[0]?.event.type).toBe('run.started');
    expect(await collect(engine.watch(executionId, { from: all.at(-1)!.position }))).toEqual([]);
  });

  test('an unknown execution id is an ExecutionNotFoundError', async () => {
    const engine = embedded();
    await expect(collect(engine.watch('no-such-execution'))).rejects.toBeInstanceOf(ExecutionNotFoundError);
  });

  test('an engine without an execution stream refuses with WatchUnavailableError', async () => {
    const engine = createEngine({ store: new MemoryStore(), clock: new ManualClock(), reactors: [importRows] });
    const { executionId } = await engine.run(importRows, { rows: 1 });
    const error = await collect(engine.watch(executionId)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WatchUnavailableError);
    expect(error).toMatchObject({ code: 'watch_unavailable', details: { executionId } });
  });

  test('an abort signal ends a watch of a live execution', async () => {
    const engine = embedded();
    const g = gate();
    const started = await engine.start(importRows, { rows: 1 });
    gates.set(started.executionId, g);
    const abort = new AbortController();
    const seen: WatchItem[] = [];
    for await (const item of engine.watch(started.executionId, { signal: abort.signal })) {
      seen.push(item);
      if (item.event.type === 'step.progress') abort.abort();
    }
    expect(seen.at(-1)?.event.type).toBe('step.progress');
    g.open();
    expect((await engine.wait(started.executionId)).status).toBe('completed');
  });
});
