/**
 * `recordTtlMs` on the in-process factories (docs/decisions/104, 117): `createEmbeddedEngine`
 * and `createTestEngine` honour it, and refuse it — a `RuntimeOptionError` — when it is not a
 * positive integer or `Infinity`, or when a `store` of the caller's own is given beside it (that
 * store keeps its own TTL). Memory backend, manual clock; nothing sleeps.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  createEmbeddedEngine,
  MemoryStore,
  reactor,
  RuntimeOptionError,
  type EmbeddedEngine,
} from '../../src/index.js';
import { createTestEngine, ManualClock } from '../../src/testing/index.js';

const note = reactor('ttl-note')
  .input({ n: z.number() })
  .step('note', { args: ($) => ({ n: $.input('n') }), run: ({ n }) => n })
  .returns('note');

const engines: EmbeddedEngine[] = [];
afterEach(async () => {
  for (const engine of engines.splice(0)) await engine.close();
});

function refusal(make: () => unknown): RuntimeOptionError {
  try {
    make();
  } catch (error) {
    expect(error).toBeInstanceOf(RuntimeOptionError);
    return error as RuntimeOptionError;
  }
  throw new Error('not refused');
}

describe('createEmbeddedEngine({ recordTtlMs })', () => {
  test('a record expires recordTtlMs after its last write, not 24 h', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const engine = createEmbeddedEngine({ clock, recordTtlMs: 60_000, reactors: [note] });
    engines.push(engine);
    const { executionId } = await engine.run(note, { n: 1 });
    clock.advance(59_999);
    expect((await engine.result(executionId))?.status).toBe('completed');
    clock.advance(1);
    expect(await engine.result(executionId)).toBeUndefined();
  });

  test('Infinity keeps the record past the default day', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const engine = createEmbeddedEngine({ clock, recordTtlMs: Infinity, reactors: [note] });
    engines.push(engine);
    const { executionId } = await engine.run(note, { n: 2 });
    clock.advance('30d');
    expect((await engine.result(executionId))?.status).toBe('completed');
  });

  test.each([0, -5, 2.5, Number.NaN, '1h'])('recordTtlMs %s is refused', (value) => {
    const error = refusal(() => createEmbeddedEngine({ recordTtlMs: value as number }));
    expect(error.details).toEqual({
      factory: 'createEmbeddedEngine',
      option: 'recordTtlMs',
      value: String(value === '1h' ? '"1h"' : value),
    });
  });

  test('beside a store of your own it is refused, naming where to set it', () => {
    const error = refusal(() => createEmbeddedEngine({ store: new MemoryStore(), recordTtlMs: 60_000 }));
    expect(error.code).toBe('runtime_option_invalid');
    expect(error.message).toMatch(/new MemoryStore\(\{ recordTtlMs \}\)/);
  });
});

describe('createTestEngine({ recordTtlMs })', () => {
  test('its memory store keeps records that long', () => {
    const t = createTestEngine({ recordTtlMs: 60_000 });
    expect((t.store as MemoryStore).recordTtlMs).toBe(60_000);
    expect((createTestEngine().store as MemoryStore).recordTtlMs).toBe(86_400_000);
  });

  test('refused when not valid, or beside a store of your own', () => {
    expect(refusal(() => createTestEngine({ recordTtlMs: 0 })).details.factory).toBe('createTestEngine');
    expect(refusal(() => createTestEngine({ store: new MemoryStore(), recordTtlMs: 1_000 })).details.option).toBe(
      'recordTtlMs',
    );
  });
});
